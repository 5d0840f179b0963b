package topology

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/units"
)

// The topology file, as decoded before anything is checked: every scalar
// is its text (nil when absent), named mappings keep their order.
type (
	fileTopology struct {
		Name     *string      `yaml:"name"`
		Switches []fileSwitch `yaml:"switches"`
		Nodes    []fileNode   `yaml:"nodes"`
	}
	fileSwitch struct {
		Name string  `yaml:",key"`
		MTU  *string `yaml:"mtu"`
		Loss *string `yaml:"loss"`
	}
	fileNode struct {
		Name     string        `yaml:",key"`
		Forward  *string       `yaml:"forward"`
		Links    []fileLink    `yaml:"links"`
		Routes   []fileRoute   `yaml:"routes"`
		Services []fileService `yaml:"services"`
		VM       *fileVM       `yaml:"vm"`
	}
	fileLink struct {
		Name      *string  `yaml:"name"`
		Switch    *string  `yaml:"switch"`
		Address   *scalars `yaml:"address"`
		Addresses *scalars `yaml:"addresses"`
		MTU       *string  `yaml:"mtu"`
		PortMTU   *string  `yaml:"port_mtu"`
		Rate      *string  `yaml:"rate"`
		Loss      *string  `yaml:"loss"`
	}
	fileRoute struct {
		To  *string `yaml:"to"`
		Via *string `yaml:"via"`
	}
	fileService struct {
		Kind    *string `yaml:"kind"`
		Role    *string `yaml:"role"`
		Primary *string `yaml:"primary"`
		Via     *string `yaml:"via"`
		Sync    *string `yaml:"sync"`
		Port    *string `yaml:"port"`
	}
)

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads a topology from YAML and validates it. file names the source
// in errors. The file is decoded strictly (unknown fields, keys given
// twice, values of the wrong kind and values that do not parse are
// refused), the file's defaults are filled in (link names eth<i>, MTUs
// from the switch, "default" routes, "kind: primary"), and then
// Topology.Validate checks every rule; its error gets the file, the line
// and the file's spelling of the field. Every problem is a
// *TopologyError, so Up never starts on a topology it cannot finish.
func Parse(file string, data []byte) (*Topology, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &TopologyError{File: file, Line: line, Problem: "bad YAML: " + m[2]}
		}
		return nil, &TopologyError{File: file, Problem: "bad YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &TopologyError{File: file, Line: 1, Problem: "empty topology: want name, switches and nodes"}
	}
	root := resolve(doc.Content[0])
	d := &decoder{file: file, lines: map[string]int{"": root.Line}}
	if root.Kind != yaml.MappingNode {
		return nil, d.errf(root, "", "want a mapping, got %s", kindName(root))
	}
	var ft fileTopology
	if err := d.decode(root, "", reflect.ValueOf(&ft).Elem()); err != nil {
		return nil, err
	}
	c := &converter{decoder: d, spelled: map[string]string{}, switchLoss: map[string]float64{}}
	t, err := c.topology(&ft)
	if err != nil {
		return nil, err
	}
	t.File = file
	if err := t.Validate(); err != nil {
		te := err.(*TopologyError)
		te.File, te.Lab = file, ""
		te.Line, te.Field = c.line(te.Field), c.spell(te.Field)
		if te.First != "" {
			te.FirstLine, te.First = c.line(te.First), c.spell(te.First)
		}
		return nil, te
	}
	return t, nil
}

// converter turns the decoded file into a Topology: values are parsed
// (sizes, rates, addresses, booleans, ports) and the file's defaults
// filled in. What a valid topology is, it leaves to Validate.
type converter struct {
	*decoder
	// spelled maps a field path of Validate's to the file's spelling
	// where they differ: nodes.n.links[0].addresses[0] was "address".
	spelled map[string]string
	// switchLoss is each switch's loss, the default of its links'.
	switchLoss map[string]float64
}

// line returns the line of field in the file: its own, or that of the
// nearest enclosing field the file has (a default has no line of its own).
func (c *converter) line(field string) int {
	field = c.spell(field)
	for {
		if l, ok := c.lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return c.lines[""]
		}
		field = field[:i]
	}
}

func (c *converter) spell(field string) string {
	if s, ok := c.spelled[field]; ok {
		return s
	}
	return field
}

func (c *converter) fail(field, format string, a ...any) error {
	return &TopologyError{File: c.file, Line: c.line(field), Field: field, Problem: fmt.Sprintf(format, a...)}
}

func (c *converter) topology(ft *fileTopology) (*Topology, error) {
	t := &Topology{}
	if ft.Name != nil {
		t.Name = *ft.Name
	}
	switchMTU := map[string]int{}
	for _, fs := range ft.Switches {
		s := SwitchSpec{Name: fs.Name, MTU: 1500}
		if fs.MTU != nil {
			var err error
			if s.MTU, err = c.mtu(*fs.MTU, join("switches."+fs.Name, "mtu")); err != nil {
				return nil, err
			}
		}
		if fs.Loss != nil {
			loss, err := ParseLoss(*fs.Loss)
			if err != nil {
				return nil, c.fail(join("switches."+fs.Name, "loss"), "%v", err)
			}
			c.switchLoss[s.Name] = loss
		}
		switchMTU[s.Name] = s.MTU
		t.Switches = append(t.Switches, s)
	}
	for _, fn := range ft.Nodes {
		n, err := c.node(fn, switchMTU)
		if err != nil {
			return nil, err
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

func (c *converter) mtu(s, field string) (int, error) {
	v, err := units.ParseSize(s)
	if err != nil {
		return 0, c.fail(field, "%q is not a size in bytes", s)
	}
	if v > math.MaxInt32 { // would not fit an int everywhere
		return 0, c.fail(field, "MTU %s out of range %d..%d", s, MinMTU, MaxMTU)
	}
	return int(v), nil
}

func (c *converter) boolean(s, field string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, c.fail(field, "want true or false, got %q", s)
	}
	return b, nil
}

func (c *converter) node(fn fileNode, switchMTU map[string]int) (NodeSpec, error) {
	f := "nodes." + fn.Name
	n := NodeSpec{Name: fn.Name}
	var err error
	if fn.Forward != nil {
		if n.Forward, err = c.boolean(*fn.Forward, f+".forward"); err != nil {
			return n, err
		}
	}
	for i, fl := range fn.Links {
		l, err := c.link(fl, fmt.Sprintf("%s.links[%d]", f, i), i, switchMTU)
		if err != nil {
			return n, err
		}
		n.Links = append(n.Links, l)
	}
	for i, fr := range fn.Routes {
		r, err := c.route(fr, fmt.Sprintf("%s.routes[%d]", f, i))
		if err != nil {
			return n, err
		}
		n.Routes = append(n.Routes, r)
	}
	for i, fs := range fn.Services {
		s, err := c.service(fs, fmt.Sprintf("%s.services[%d]", f, i))
		if err != nil {
			return n, err
		}
		n.Services = append(n.Services, s)
	}
	if fn.VM != nil {
		if n.VM, err = c.vm(fn.VM, f+".vm"); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *converter) link(fl fileLink, f string, index int, switchMTU map[string]int) (LinkSpec, error) {
	l := LinkSpec{Name: fmt.Sprintf("eth%d", index)}
	var err error
	if fl.Name != nil {
		l.Name = *fl.Name
	}
	if fl.Switch != nil {
		l.Switch = *fl.Switch
	}
	// The switch's MTU is the default; a link into an unknown switch keeps
	// 0 and Validate names the switch.
	l.MTU, l.PortMTU = switchMTU[l.Switch], switchMTU[l.Switch]
	if fl.MTU != nil {
		if l.MTU, err = c.mtu(*fl.MTU, f+".mtu"); err != nil {
			return l, err
		}
	}
	if fl.PortMTU != nil {
		if l.PortMTU, err = c.mtu(*fl.PortMTU, f+".port_mtu"); err != nil {
			return l, err
		}
	}
	l.LossPercent = c.switchLoss[l.Switch]
	if fl.Loss != nil {
		if l.LossPercent, err = ParseLoss(*fl.Loss); err != nil {
			return l, c.fail(f+".loss", "%v", err)
		}
	}
	if fl.Rate != nil {
		s := *fl.Rate
		r, err := units.ParseRate(s)
		if err != nil {
			why := "want e.g. 100mbit, 1gbit"
			if errors.Is(err, units.ErrBytes) {
				why = bytesNotBits
			}
			return l, c.fail(f+".rate", "%q is not a rate (%s)", s, why)
		}
		if r == 0 { // 0 means "not shaped" in a Topology: a file leaves rate out
			return l, c.fail(f+".rate", "%s", rateProblem(r))
		}
		l.RateBitsPerSec = r
	}
	addrs, key := fl.Address, "address"
	if fl.Addresses != nil {
		if addrs != nil {
			// Blame the key that comes second.
			key = "addresses"
			if c.lines[f+".address"] > c.lines[f+".addresses"] {
				key = "address"
			}
			return l, c.fail(f+"."+key, "give either address or addresses, not both")
		}
		addrs, key = fl.Addresses, "addresses"
	}
	if addrs == nil {
		return l, nil
	}
	for i, s := range addrs.Items {
		spelled := f + "." + key
		if addrs.List {
			spelled = fmt.Sprintf("%s[%d]", spelled, i)
		}
		c.spelled[fmt.Sprintf("%s.addresses[%d]", f, i)] = spelled
		pfx, err := parseAddress(s)
		if err != nil {
			return l, c.fail(spelled, "%v", err)
		}
		l.Addresses = append(l.Addresses, pfx)
	}
	return l, nil
}

func (c *converter) route(fr fileRoute, f string) (RouteSpec, error) {
	var r RouteSpec
	if fr.Via != nil {
		var err error
		if r.Via, err = netip.ParseAddr(strings.TrimSpace(*fr.Via)); err != nil {
			return r, c.fail(f+".via", "%q is not an IP address", *fr.Via)
		}
	}
	if fr.To == nil {
		return r, nil
	}
	switch to := strings.TrimSpace(*fr.To); {
	case to == "default" && r.Via.Is6():
		r.To = netip.MustParsePrefix("::/0")
	case to == "default" && r.Via.Is4():
		r.To = netip.MustParsePrefix("0.0.0.0/0")
	case to == "default":
		// No gateway yet: Validate says it is missing.
	default:
		pfx, err := netip.ParsePrefix(to)
		if err != nil {
			return r, c.fail(f+".to", "%q is not a prefix (want e.g. 198.18.20.0/24 or default)", to)
		}
		r.To = pfx.Masked()
	}
	return r, nil
}

// service reads one service. "kind: primary" and "kind: standby" mean
// PostgreSQL in that role, and a standby is synchronous unless it says
// otherwise.
func (c *converter) service(fs fileService, f string) (ServiceSpec, error) {
	var s ServiceSpec
	for _, p := range []struct {
		from *string
		to   *string
	}{{fs.Kind, &s.Kind}, {fs.Role, &s.Role}, {fs.Primary, &s.Primary}, {fs.Via, &s.Via}} {
		if p.from != nil {
			*p.to = *p.from
		}
	}
	if fs.Sync != nil {
		var err error
		if s.Sync, err = c.boolean(*fs.Sync, f+".sync"); err != nil {
			return s, err
		}
	}
	if fs.Port != nil {
		// 0 means "the default port" in a ServiceSpec: a file leaves port out.
		port, err := strconv.Atoi(*fs.Port)
		if err != nil || port < 1 || port > 65535 {
			return s, c.fail(f+".port", "%q is not a port (1..65535)", *fs.Port)
		}
		s.Port = port
	}
	if s.Kind == RolePrimary || s.Kind == RoleStandby {
		s.Kind, s.Role = KindPostgres, s.Kind
	}
	if s.Kind == KindPostgres && s.Role == RoleStandby && fs.Sync == nil {
		s.Sync = true
	}
	return s, nil
}

// bytesNotBits is what a topology or lab set says of a rate in bytes
// ("1GB"): units.ErrBytes, and what to write instead.
const bytesNotBits = "a capital B means bytes; a rate is in bits: want e.g. 8gbit for 1GB/s"
