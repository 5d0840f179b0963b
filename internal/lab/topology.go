package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/units"
)

// Topology is a parsed and validated lab description. Parse fills every
// default (link names, MTUs, port MTUs, switch-side port names), so the
// values here are exactly what Up builds.
type Topology struct {
	Name     string       `json:"name"`
	File     string       `json:"file,omitempty"` // where it was read from: a path or "builtin:NAME"
	Switches []SwitchSpec `json:"switches"`
	Nodes    []NodeSpec   `json:"nodes"`
}

// SwitchSpec is a switch: a bridge in the lab's switch namespace. MTU is the
// bridge's MTU and the default MTU of its ports and links.
type SwitchSpec struct {
	Name string `json:"name"`
	MTU  int    `json:"mtu"`
}

// NodeSpec is a node: a network namespace with links into switches.
// Forward makes it a router (IPv4 and IPv6 forwarding on).
type NodeSpec struct {
	Name    string      `json:"name"`
	Forward bool        `json:"forward,omitempty"`
	Links   []LinkSpec  `json:"links"`
	Routes  []RouteSpec `json:"routes,omitempty"`
	// Services the node runs while the lab is up (service.go).
	Services []ServiceSpec `json:"services,omitempty"`
}

// Addresses returns the addresses of all the node's links, in order.
func (n NodeSpec) Addresses() []netip.Prefix {
	var out []netip.Prefix
	for _, l := range n.Links {
		out = append(out, l.Addresses...)
	}
	return out
}

// LinkSpec is one veth pair: Name inside the node, Port on the switch side.
// MTU is the node side's MTU, PortMTU the switch side's: frames larger than
// PortMTU are dropped without an ICMP error. RateBitsPerSec, when not zero,
// shapes the node's egress with a token bucket.
type LinkSpec struct {
	Name           string         `json:"name"`
	Switch         string         `json:"switch"`
	Port           string         `json:"port"`
	Addresses      []netip.Prefix `json:"addresses,omitempty"`
	MTU            int            `json:"mtu"`
	PortMTU        int            `json:"port_mtu"`
	RateBitsPerSec int64          `json:"rate_bits_per_sec,omitempty"`
}

// RouteSpec is a static route in a node: To (a prefix; "default" in the file
// means 0.0.0.0/0 or ::/0) via a gateway on one of the node's links.
type RouteSpec struct {
	To  netip.Prefix `json:"to"`
	Via netip.Addr   `json:"via"`
}

// Limits of what a topology may ask for.
const (
	MinMTU  = 68    // the IPv4 minimum (RFC 791)
	MaxMTU  = 65535 // the largest MTU a veth accepts
	MinMTU6 = 1280  // a link with an IPv6 address needs at least this (RFC 8200)
	// MinRateBitsPerSec and MaxRateBitsPerSec bound a link's rate.
	MinRateBitsPerSec = 8_000
	MaxRateBitsPerSec = 400_000_000_000
	maxNameLen        = 24 // lab and node names; namespaces are il-LAB.NODE
)

// ErrInvalid is wrapped by every error about a topology file.
var ErrInvalid = errors.New("invalid topology")

// TopologyError names the file, the line and the field of a problem in a
// topology. It prints as "FILE:LINE: field: problem".
type TopologyError struct {
	File    string
	Line    int // 0 when unknown
	Field   string
	Problem string
}

func (e *TopologyError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *TopologyError) Is(target error) bool { return target == ErrInvalid }

var (
	labNameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	ifaceRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)
	yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// parser walks a yaml.Node tree, keeping the file name for errors.
type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, field, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &TopologyError{File: p.file, Line: line, Field: field, Problem: fmt.Sprintf(format, a...)}
}

// Parse reads a topology from YAML. file names the source in errors. The
// whole topology is validated here: unknown fields, unknown switches,
// duplicate names and addresses, MTUs and rates out of range, and routes
// whose gateway is on no link are all refused with a *TopologyError, so Up
// never starts on a topology it cannot finish.
func Parse(file string, data []byte) (*Topology, error) {
	p := &parser{file: file}
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
	t, err := p.topology(root)
	if err != nil {
		return nil, err
	}
	t.File = file
	return t, nil
}

// resolve follows YAML aliases so that anchors work as users expect.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// entry is one key of a mapping with its value.
type entry struct {
	key, val *yaml.Node
}

// mapping returns the entries of a mapping node, refusing duplicate keys and
// keys not in allowed.
func (p *parser) mapping(n *yaml.Node, field string, allowed ...string) ([]entry, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, field, "want a mapping, got %s", kindName(n))
	}
	seen := map[string]bool{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, field, "want a name as key, got %s", kindName(k))
		}
		if seen[k.Value] {
			return nil, p.errf(k, join(field, k.Value), "given twice")
		}
		seen[k.Value] = true
		if allowed != nil && !contains(allowed, k.Value) {
			return nil, p.errf(k, join(field, k.Value), "unknown field (known: %s)", strings.Join(allowed, ", "))
		}
		out = append(out, entry{k, v})
	}
	return out, nil
}

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
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) scalar(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, field, "want a value, got %s", kindName(n))
	}
	return n.Value, nil
}

func (p *parser) mtu(n *yaml.Node, field string) (int, error) {
	s, err := p.scalar(n, field)
	if err != nil {
		return 0, err
	}
	v, err := units.ParseSize(s)
	if err != nil {
		return 0, p.errf(n, field, "%q is not a size in bytes", s)
	}
	if v < MinMTU || v > MaxMTU {
		return 0, p.errf(n, field, "MTU %d out of range %d..%d", v, MinMTU, MaxMTU)
	}
	return int(v), nil
}

func (p *parser) list(n *yaml.Node, field string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, field, "want a list, got %s", kindName(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out, nil
}

// where remembers the position of a value for later cross-checks.
type where struct {
	field string
	line  int
}

func (p *parser) topology(root *yaml.Node) (*Topology, error) {
	entries, err := p.mapping(root, "", "name", "switches", "nodes")
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	var switchesNode, nodesNode *yaml.Node
	for _, e := range entries {
		switch e.key.Value {
		case "name":
			if t.Name, err = p.scalar(e.val, "name"); err != nil {
				return nil, err
			}
			if err := checkLabName(t.Name); err != nil {
				return nil, p.errf(e.val, "name", "%v", err)
			}
		case "switches":
			switchesNode = e.val
		case "nodes":
			nodesNode = e.val
		}
	}
	if t.Name == "" {
		return nil, p.errf(root, "name", "missing: every lab needs a name")
	}
	switchMTU := map[string]int{}
	if switchesNode != nil && switchesNode.Tag != "!!null" {
		sws, err := p.mapping(switchesNode, "switches")
		if err != nil {
			return nil, err
		}
		for _, e := range sws {
			field := join("switches", e.key.Value)
			if err := checkIface(e.key.Value); err != nil {
				return nil, p.errf(e.key, field, "switch name %v", err)
			}
			sw := SwitchSpec{Name: e.key.Value, MTU: 1500}
			if e.val.Tag != "!!null" {
				props, err := p.mapping(e.val, field, "mtu")
				if err != nil {
					return nil, err
				}
				for _, pe := range props {
					if sw.MTU, err = p.mtu(pe.val, join(field, "mtu")); err != nil {
						return nil, err
					}
				}
			}
			switchMTU[sw.Name] = sw.MTU
			t.Switches = append(t.Switches, sw)
		}
	}
	if nodesNode == nil || nodesNode.Tag == "!!null" {
		return nil, p.errf(root, "nodes", "missing: a lab needs at least one node")
	}
	nodes, err := p.mapping(nodesNode, "nodes")
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, p.errf(nodesNode, "nodes", "empty: a lab needs at least one node")
	}
	used := map[netip.Addr]where{}
	refs := map[*ServiceSpec]*yaml.Node{}
	for _, e := range nodes {
		n, err := p.node(e, switchMTU, used, refs)
		if err != nil {
			return nil, err
		}
		t.Nodes = append(t.Nodes, n)
	}
	err = checkServices(t, func(i, j int, problem string) error {
		at := refs[&t.Nodes[i].Services[j]] // the slices share their arrays
		return p.errf(at, fmt.Sprintf("nodes.%s.services[%d]", t.Nodes[i].Name, j), "%s", problem)
	})
	if err != nil {
		return nil, err
	}
	assignPorts(t)
	return t, nil
}

func checkLabName(s string) error {
	if len(s) > maxNameLen {
		return fmt.Errorf("%q is longer than %d characters", s, maxNameLen)
	}
	if !labNameRE.MatchString(s) {
		return fmt.Errorf("%q: use lower-case letters, digits, '-' and '_'", s)
	}
	return nil
}

// checkIface accepts names the kernel takes as interface names (at most 15
// bytes) and that read well in ip(8) output.
func checkIface(s string) error {
	if len(s) > 15 {
		return fmt.Errorf("%q is longer than 15 characters (the kernel's interface-name limit)", s)
	}
	if !ifaceRE.MatchString(s) {
		return fmt.Errorf("%q: use letters, digits, '-' and '_'", s)
	}
	return nil
}

func (p *parser) node(e entry, switchMTU map[string]int, used map[netip.Addr]where, refs map[*ServiceSpec]*yaml.Node) (NodeSpec, error) {
	name := e.key.Value
	field := join("nodes", name)
	if err := checkLabName(name); err != nil {
		return NodeSpec{}, p.errf(e.key, field, "node name %v", err)
	}
	n := NodeSpec{Name: name}
	if e.val.Tag == "!!null" {
		return n, nil
	}
	props, err := p.mapping(e.val, field, "forward", "links", "routes", "services")
	if err != nil {
		return n, err
	}
	var routesNode *yaml.Node
	var routesField string
	for _, pe := range props {
		f := join(field, pe.key.Value)
		switch pe.key.Value {
		case "forward":
			s, err := p.scalar(pe.val, f)
			if err != nil {
				return n, err
			}
			if n.Forward, err = strconv.ParseBool(s); err != nil {
				return n, p.errf(pe.val, f, "want true or false, got %q", s)
			}
		case "links":
			items, err := p.list(pe.val, f)
			if err != nil {
				return n, err
			}
			names := map[string]bool{}
			for i, item := range items {
				l, err := p.link(item, fmt.Sprintf("%s[%d]", f, i), i, switchMTU, used)
				if err != nil {
					return n, err
				}
				if names[l.Name] {
					return n, p.errf(item, fmt.Sprintf("%s[%d].name", f, i), "link %q given twice in node %s", l.Name, name)
				}
				names[l.Name] = true
				n.Links = append(n.Links, l)
			}
		case "routes":
			routesNode, routesField = pe.val, f
		case "services":
			if n.Services, err = p.services(pe.val, f, refs); err != nil {
				return n, err
			}
		}
	}
	// Routes last: their gateways are checked against the links.
	if routesNode != nil {
		items, err := p.list(routesNode, routesField)
		if err != nil {
			return n, err
		}
		seen := map[netip.Prefix]bool{}
		for i, item := range items {
			r, err := p.route(item, fmt.Sprintf("%s[%d]", routesField, i), n.Links)
			if err != nil {
				return n, err
			}
			if seen[r.To] {
				return n, p.errf(item, fmt.Sprintf("%s[%d].to", routesField, i), "route to %s given twice", r.To)
			}
			seen[r.To] = true
			n.Routes = append(n.Routes, r)
		}
	}
	return n, nil
}

func (p *parser) link(item *yaml.Node, field string, index int, switchMTU map[string]int, used map[netip.Addr]where) (LinkSpec, error) {
	props, err := p.mapping(item, field, "name", "switch", "address", "addresses", "mtu", "port_mtu", "rate")
	if err != nil {
		return LinkSpec{}, err
	}
	l := LinkSpec{Name: fmt.Sprintf("eth%d", index)}
	var mtuNode *yaml.Node
	var addrNodes []*yaml.Node
	var addrField string
	addrList := false
	for _, pe := range props {
		f := join(field, pe.key.Value)
		switch pe.key.Value {
		case "name":
			if l.Name, err = p.scalar(pe.val, f); err != nil {
				return l, err
			}
			if err := checkIface(l.Name); err != nil {
				return l, p.errf(pe.val, f, "%v", err)
			}
			if l.Name == "lo" {
				return l, p.errf(pe.val, f, "lo is the node's loopback; pick another name")
			}
		case "switch":
			if l.Switch, err = p.scalar(pe.val, f); err != nil {
				return l, err
			}
			if _, ok := switchMTU[l.Switch]; !ok {
				return l, p.errf(pe.val, f, "unknown switch %q (switches: %s)", l.Switch, keys(switchMTU))
			}
		case "address", "addresses":
			if addrNodes != nil {
				return l, p.errf(pe.key, f, "give either address or addresses, not both")
			}
			addrField = f
			if pe.val.Kind == yaml.SequenceNode {
				addrList = true
				if addrNodes, err = p.list(pe.val, f); err != nil {
					return l, err
				}
			} else {
				addrNodes = []*yaml.Node{pe.val}
			}
		case "mtu":
			if l.MTU, err = p.mtu(pe.val, f); err != nil {
				return l, err
			}
			mtuNode = pe.val
		case "port_mtu":
			if l.PortMTU, err = p.mtu(pe.val, f); err != nil {
				return l, err
			}
		case "rate":
			s, err := p.scalar(pe.val, f)
			if err != nil {
				return l, err
			}
			r, err := units.ParseRate(s)
			if err != nil {
				return l, p.errf(pe.val, f, "%q is not a rate (want e.g. 100mbit, 1gbit)", s)
			}
			if r < MinRateBitsPerSec || r > MaxRateBitsPerSec {
				return l, p.errf(pe.val, f, "rate %s out of range %s..%s", s,
					units.FormatRate(MinRateBitsPerSec), units.FormatRate(MaxRateBitsPerSec))
			}
			l.RateBitsPerSec = r
		}
	}
	if l.Switch == "" {
		return l, p.errf(item, join(field, "switch"), "missing: every link goes into a switch")
	}
	if l.MTU == 0 {
		l.MTU = switchMTU[l.Switch]
	}
	if l.PortMTU == 0 {
		l.PortMTU = switchMTU[l.Switch]
	}
	for i, an := range addrNodes {
		f := addrField
		if addrList {
			f = fmt.Sprintf("%s[%d]", addrField, i)
		}
		s, err := p.scalar(an, f)
		if err != nil {
			return l, err
		}
		pfx, err := parseAddress(s)
		if err != nil {
			return l, p.errf(an, f, "%v", err)
		}
		if pfx.Addr().Is6() && l.MTU < MinMTU6 {
			at := an
			if mtuNode != nil {
				at = mtuNode
			}
			return l, p.errf(at, join(field, "mtu"), "MTU %d is below %d, the IPv6 minimum, and the link has IPv6 address %s", l.MTU, MinMTU6, pfx)
		}
		if w, dup := used[pfx.Addr()]; dup {
			return l, p.errf(an, f, "duplicate address %s (already used by %s at line %d)", pfx.Addr(), w.field, w.line)
		}
		used[pfx.Addr()] = where{field: f, line: an.Line}
		l.Addresses = append(l.Addresses, pfx)
	}
	return l, nil
}

// parseAddress accepts ADDRESS/LEN for a host on a link: not the network or
// broadcast address, nothing the kernel treats specially.
func parseAddress(s string) (netip.Prefix, error) {
	pfx, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		if _, aerr := netip.ParseAddr(strings.TrimSpace(s)); aerr == nil {
			return pfx, fmt.Errorf("%q has no prefix length (want e.g. 198.18.10.1/24 or fd00:10::1/64)", s)
		}
		return pfx, fmt.Errorf("%q is not an address with prefix length (want e.g. 198.18.10.1/24)", s)
	}
	a := pfx.Addr()
	if a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() {
		return pfx, fmt.Errorf("%s cannot be a lab address (loopback, multicast, link-local, unspecified and mapped addresses are refused)", s)
	}
	if a.Is4() && pfx.Bits() < 31 {
		if a == pfx.Masked().Addr() {
			return pfx, fmt.Errorf("%s is the network address of its subnet", s)
		}
		if a == lastAddr(pfx) {
			return pfx, fmt.Errorf("%s is the broadcast address of its subnet", s)
		}
	}
	return pfx, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func (p *parser) route(item *yaml.Node, field string, links []LinkSpec) (RouteSpec, error) {
	props, err := p.mapping(item, field, "to", "via")
	if err != nil {
		return RouteSpec{}, err
	}
	var r RouteSpec
	var toNode, viaNode *yaml.Node
	var toText string
	for _, pe := range props {
		f := join(field, pe.key.Value)
		s, err := p.scalar(pe.val, f)
		if err != nil {
			return r, err
		}
		switch pe.key.Value {
		case "to":
			toNode, toText = pe.val, strings.TrimSpace(s)
		case "via":
			viaNode = pe.val
			if r.Via, err = netip.ParseAddr(strings.TrimSpace(s)); err != nil {
				return r, p.errf(pe.val, f, "%q is not an IP address", s)
			}
		}
	}
	if viaNode == nil {
		return r, p.errf(item, join(field, "via"), "missing: the gateway of the route")
	}
	if toNode == nil {
		return r, p.errf(item, join(field, "to"), "missing: the destination prefix (or default)")
	}
	if toText == "default" {
		if r.Via.Is4() {
			r.To = netip.MustParsePrefix("0.0.0.0/0")
		} else {
			r.To = netip.MustParsePrefix("::/0")
		}
	} else {
		pfx, err := netip.ParsePrefix(toText)
		if err != nil {
			return r, p.errf(toNode, join(field, "to"), "%q is not a prefix (want e.g. 198.18.20.0/24 or default)", toText)
		}
		r.To = pfx.Masked()
	}
	if r.To.Addr().Is4() != r.Via.Is4() {
		return r, p.errf(viaNode, join(field, "via"), "gateway %s and destination %s are of different IP versions", r.Via, r.To)
	}
	for _, l := range links {
		for _, a := range l.Addresses {
			if a.Masked().Contains(r.Via) {
				if a.Addr() == r.Via {
					return r, p.errf(viaNode, join(field, "via"), "gateway %s is the node's own address", r.Via)
				}
				return r, nil
			}
		}
	}
	return r, p.errf(viaNode, join(field, "via"), "gateway %s is not on any link of this node", r.Via)
}

func keys(m map[string]int) string {
	if len(m) == 0 {
		return "none defined"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// assignPorts names the switch side of every link. All ports and bridges of
// a lab share one namespace, so names must be unique there and fit the
// kernel's 15 characters: NODE-LINK when that fits, else pN.
func assignPorts(t *Topology) {
	taken := map[string]bool{}
	for _, s := range t.Switches {
		taken[s.Name] = true
	}
	n := 0
	for i := range t.Nodes {
		for j := range t.Nodes[i].Links {
			l := &t.Nodes[i].Links[j]
			name := t.Nodes[i].Name + "-" + l.Name
			for len(name) > 15 || taken[name] {
				n++
				name = fmt.Sprintf("p%d", n)
			}
			taken[name] = true
			l.Port = name
		}
	}
}

// Validate checks a topology built or changed in Go (Parse has already
// checked one read from a file, with line numbers) and names the switch
// side of every link. Up calls it before it creates anything.
// MaxSwitchPorts is the most links one switch takes: a Linux bridge has
// at most BR_MAX_PORTS (1 << BR_PORT_BITS = 1024) ports, and the 1025th
// fails only when lab up adds it.
const MaxSwitchPorts = 1024

func (t *Topology) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("lab %s: %w: %s", t.Name, ErrInvalid, fmt.Sprintf(format, a...))
	}
	if err := checkLabName(t.Name); err != nil {
		return bad("name %v", err)
	}
	switchMTU := map[string]int{}
	for _, s := range t.Switches {
		if err := checkIface(s.Name); err != nil {
			return bad("switch name %v", err)
		}
		if _, dup := switchMTU[s.Name]; dup {
			return bad("switch %s given twice", s.Name)
		}
		if s.MTU < MinMTU || s.MTU > MaxMTU {
			return bad("switch %s: MTU %d out of range %d..%d", s.Name, s.MTU, MinMTU, MaxMTU)
		}
		switchMTU[s.Name] = s.MTU
	}
	if len(t.Nodes) == 0 {
		return bad("no nodes")
	}
	nodes := map[string]bool{}
	addrs := map[netip.Addr]string{}
	ports := map[string]int{} // links per switch
	for _, n := range t.Nodes {
		if err := checkLabName(n.Name); err != nil {
			return bad("node name %v", err)
		}
		if nodes[n.Name] {
			return bad("node %s given twice", n.Name)
		}
		nodes[n.Name] = true
		links := map[string]bool{}
		for _, l := range n.Links {
			where := fmt.Sprintf("node %s link %s", n.Name, l.Name)
			if err := checkIface(l.Name); err != nil || l.Name == "lo" {
				return bad("%s: bad interface name", where)
			}
			if links[l.Name] {
				return bad("%s given twice", where)
			}
			links[l.Name] = true
			if _, ok := switchMTU[l.Switch]; !ok {
				return bad("%s: unknown switch %q", where, l.Switch)
			}
			if ports[l.Switch]++; ports[l.Switch] > MaxSwitchPorts {
				return bad("switch %s: more than %d links (a Linux bridge has at most %d ports)", l.Switch, MaxSwitchPorts, MaxSwitchPorts)
			}
			for _, m := range []int{l.MTU, l.PortMTU} {
				if m < MinMTU || m > MaxMTU {
					return bad("%s: MTU %d out of range %d..%d", where, m, MinMTU, MaxMTU)
				}
			}
			if l.RateBitsPerSec != 0 && (l.RateBitsPerSec < MinRateBitsPerSec || l.RateBitsPerSec > MaxRateBitsPerSec) {
				return bad("%s: rate %d bit/s out of range", where, l.RateBitsPerSec)
			}
			for _, a := range l.Addresses {
				if _, err := parseAddress(a.String()); err != nil {
					return bad("%s: %v", where, err)
				}
				if a.Addr().Is6() && l.MTU < MinMTU6 {
					return bad("%s: MTU %d is below %d with IPv6 address %s", where, l.MTU, MinMTU6, a)
				}
				if other, dup := addrs[a.Addr()]; dup {
					return bad("%s: duplicate address %s (also on %s)", where, a.Addr(), other)
				}
				addrs[a.Addr()] = where
			}
		}
		for _, r := range n.Routes {
			onLink := false
			for _, a := range n.Addresses() {
				onLink = onLink || a.Masked().Contains(r.Via) && a.Addr() != r.Via
			}
			if !onLink || r.To.Addr().Is4() != r.Via.Is4() {
				return bad("node %s: route to %s via %s: the gateway is not on a link of the node, or of another IP version", n.Name, r.To, r.Via)
			}
		}
	}
	err := checkServices(t, func(i, j int, problem string) error {
		return bad("node %s service %s: %s", t.Nodes[i].Name, t.Nodes[i].Services[j].Kind, problem)
	})
	if err != nil {
		return err
	}
	assignPorts(t)
	return nil
}
