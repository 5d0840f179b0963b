// Package schema tells which interlink document a JSON file holds, by its
// top-level "schema" field ("interlink.cluster/v1", ...), from the bytes
// the caller read once, saying plainly when they are not JSON at all or
// are cut short, so a reader never mistakes a truncated or foreign file
// for an empty one.
package schema

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors Sniff wraps: ErrNotJSON for a document that does not parse (a
// truncated one included), ErrNone for JSON without a "schema" string.
var (
	ErrNotJSON = errors.New("bad JSON")
	ErrNone    = errors.New(`no "schema" field`)
)

// Sniff returns the "schema" field of the JSON document data. The whole
// document must parse: a truncated file says so (with the byte where it
// ends), and a top level that is not an object or a schema that is not a
// string are named, each in one line.
func Sniff(data []byte) (string, error) {
	var head struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn) && syn.Error() == "unexpected end of JSON input":
			return "", fmt.Errorf("%w: unexpected end of JSON input: truncated after %d bytes", ErrNotJSON, len(data))
		case errors.As(err, &typ) && typ.Field == "":
			return "", fmt.Errorf("%w: the top level is %s %s, not an object", ErrNotJSON, article(typ.Value), typ.Value)
		}
		return "", fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if head.Schema == nil || string(head.Schema) == "null" {
		return "", ErrNone
	}
	var s string
	if err := json.Unmarshal(head.Schema, &s); err != nil {
		return "", fmt.Errorf("%w: \"schema\" is %s, not a string", ErrNone, head.Schema)
	}
	return s, nil
}

func article(v string) string {
	switch v {
	case "array", "object":
		return "an"
	}
	return "a"
}
