package topology

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/interlink/interlink/internal/termtext"
	"gopkg.in/yaml.v3"
)

// decoder reads a yaml.Node tree into the file structs of topology_parse.go,
// strictly: a key the struct does not have, a key given twice, and a value
// of the wrong kind (a list where a mapping belongs, nothing where a value
// belongs) are refused with the field's path and line. It records the line
// of every field it reads, for Parse's messages.
//
// The file structs use five kinds of Go values:
//   - *string: an optional scalar, nil when the key is absent;
//   - a struct: a mapping whose keys are the fields' yaml tags;
//   - a slice of a struct with a `yaml:",key"` string field: a mapping
//     from names to such structs, in file order (null: none; a name
//     with a null value: a struct with only its name);
//   - any other slice: a list (null is refused: a list was asked for);
//   - scalars: one value or a list of values.
type decoder struct {
	file  string
	lines map[string]int // field path -> line of its value ("" is the document)
}

// scalars is a field that takes one value or a list of values; List says
// which the file gave.
type scalars struct {
	List  bool
	Items []string
}

var scalarsType = reflect.TypeOf(scalars{})

func (d *decoder) errf(n *yaml.Node, field, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &TopologyError{File: d.file, Line: line, Field: field, Problem: fmt.Sprintf(format, a...)}
}

// resolve follows YAML aliases so that anchors work as users expect.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// maxQuoted is how much of a scalar an error quotes.
const maxQuoted = 40

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		// A file of another kind parses as one long scalar: quote its
		// start, not the whole file (lab up /etc/passwd printed all of
		// it on the one line).
		return termtext.Short(n.Value, maxQuoted)
	}
	return "something else"
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// decode reads n (the value at field) into v, by the kind of v.
func (d *decoder) decode(n *yaml.Node, field string, v reflect.Value) error {
	n = resolve(n)
	switch {
	case v.Type() == scalarsType:
		return d.oneOrMany(n, field, v)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, field, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case v.Kind() == reflect.String:
		x, err := d.scalar(n, field)
		if err != nil {
			return err
		}
		v.SetString(x)
	case v.Kind() == reflect.Struct:
		return d.structure(n, field, v)
	case v.Kind() == reflect.Slice && keyField(v.Type().Elem()) >= 0:
		return d.named(n, field, v)
	case v.Kind() == reflect.Slice:
		return d.list(n, field, v)
	default:
		panic(fmt.Sprintf("lab: decoder: no rule for %s", v.Type()))
	}
	return nil
}

// oneOrMany reads one value or a list of values into v (a scalars).
func (d *decoder) oneOrMany(n *yaml.Node, field string, v reflect.Value) error {
	s := scalars{List: n.Kind == yaml.SequenceNode}
	if !s.List {
		x, err := d.scalar(n, field)
		if err != nil {
			return err
		}
		s.Items = []string{x}
	}
	for i, item := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		item = resolve(item)
		d.lines[f] = item.Line
		x, err := d.scalar(item, f)
		if err != nil {
			return err
		}
		s.Items = append(s.Items, x)
	}
	v.Set(reflect.ValueOf(s))
	return nil
}

// structure reads a mapping into the struct v, refusing keys it has no
// field for.
func (d *decoder) structure(n *yaml.Node, field string, v reflect.Value) error {
	return d.mapping(n, field, func(key *yaml.Node, val *yaml.Node) error {
		i, known := fieldIndex(v.Type(), key.Value)
		if !known {
			return d.errf(key, join(field, key.Value), "unknown field (known: %s)", strings.Join(fieldNames(v.Type()), ", "))
		}
		f := join(field, key.Value)
		d.lines[f] = resolve(val).Line
		return d.decode(val, f, v.Field(i))
	})
}

// named reads a mapping from names to structs into the slice v, in file
// order, each struct's key field set to its name.
func (d *decoder) named(n *yaml.Node, field string, v reflect.Value) error {
	if isNull(n) {
		return nil
	}
	k := keyField(v.Type().Elem())
	return d.mapping(n, field, func(key *yaml.Node, val *yaml.Node) error {
		f := join(field, key.Value)
		d.lines[f] = key.Line // a named entry is where its name is
		item := reflect.New(v.Type().Elem()).Elem()
		item.Field(k).SetString(key.Value)
		if !isNull(resolve(val)) { // "n1:" alone is a node with nothing more
			if err := d.decode(val, f, item); err != nil {
				return err
			}
		}
		v.Set(reflect.Append(v, item))
		return nil
	})
}

// list reads a list into the slice v.
func (d *decoder) list(n *yaml.Node, field string, v reflect.Value) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, field, "want a list, got %s", kindName(n))
	}
	for i, c := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		d.lines[f] = resolve(c).Line
		item := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(c, f, item); err != nil {
			return err
		}
		v.Set(reflect.Append(v, item))
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.errf(n, field, "want a value, got %s", kindName(n))
	}
	return n.Value, nil
}

// mapping calls fn for each key of a mapping node in order, refusing keys
// that are not names and keys given twice.
func (d *decoder) mapping(n *yaml.Node, field string, fn func(key, val *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, field, "want a mapping, got %s", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			return d.errf(k, field, "want a name as key, got %s", kindName(k))
		}
		if seen[k.Value] {
			return d.errf(k, join(field, k.Value), "given twice")
		}
		seen[k.Value] = true
		if err := fn(k, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// fieldIndex returns the index of the struct field tagged yaml:"name".
func fieldIndex(t reflect.Type, name string) (int, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag == name {
			return i, true
		}
	}
	return 0, false
}

// fieldNames lists the keys a struct takes, in declaration order.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" {
			out = append(out, tag)
		}
	}
	return out
}

// keyField returns the index of t's field tagged yaml:",key", or -1.
func keyField(t reflect.Type) int {
	if t.Kind() != reflect.Struct {
		return -1
	}
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("yaml") == ",key" {
			return i
		}
	}
	return -1
}
