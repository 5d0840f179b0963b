package cluster

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Host is one node as an inventory or the command line names it. Empty
// fields are filled in later from ~/.ssh/config and the flags (see
// Resolve); Name is what the report calls the node.
type Host struct {
	Name     string `json:"name"`
	Address  string `json:"address,omitempty"` // ansible_host / host; empty: Name
	User     string `json:"user,omitempty"`
	Port     int    `json:"port,omitempty"`
	Identity string `json:"identity,omitempty"`
	// Interconnect lists the node's interconnect addresses: the i-th of
	// every node is on interconnect network i. Empty: the mesh probes the
	// address SSH reached.
	Interconnect []netip.Addr `json:"interconnect,omitempty"`
}

// maxHosts bounds an inventory: interlink cluster is for clusters (2 to a
// few dozen nodes), and a typo in a host range must not expand to millions.
const maxHosts = 256

// ParseInventory reads an inventory: an Ansible INI inventory, an Ansible
// YAML inventory (all: hosts: / children: / vars:), or a simple YAML list
// of nodes:
//
//	nodes:
//	  - {name: rac1, host: 192.0.2.11, user: oracle, interconnect: [10.0.0.1, 10.0.1.1]}
//
// Host variables used: ansible_host, ansible_user, ansible_port,
// ansible_ssh_private_key_file and interconnect (addresses, comma
// separated). Group variables apply to the group's hosts and its
// children's. Hosts are returned once each, in the order first listed.
func ParseInventory(r io.Reader, file string) ([]Host, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var hosts []Host
	if isYAML(data, file) {
		hosts, err = parseYAML(data, file)
	} else {
		hosts, err = parseINI(data, file)
	}
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: no hosts", file)
	}
	return hosts, nil
}

// isYAML decides the format as Ansible's plugins would: a .yml/.yaml name,
// or content that parses as a YAML mapping; everything else is INI.
func isYAML(data []byte, file string) bool {
	if strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml") {
		return true
	}
	if strings.HasSuffix(file, ".ini") {
		return false
	}
	var m map[string]any
	return yaml.Unmarshal(data, &m) == nil && len(m) > 0
}

// vars are the host variables of an inventory, as strings.
type vars map[string]string

func (v vars) host(name string) (Host, error) {
	h := Host{Name: name, Address: v["ansible_host"], User: v["ansible_user"], Identity: v["ansible_ssh_private_key_file"]}
	if h.Address == "" {
		h.Address = v["ansible_ssh_host"]
	}
	if h.User == "" {
		h.User = v["ansible_ssh_user"]
	}
	addr, what := h.Address, "ansible_host"
	if addr == "" {
		addr, what = name, "name"
	}
	if err := CheckHost(addr); err != nil {
		return h, fmt.Errorf("host %s: %s %q: %v", name, what, addr, err)
	}
	port := v["ansible_port"]
	if port == "" {
		port = v["ansible_ssh_port"]
	}
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return h, fmt.Errorf("host %s: ansible_port %q is not a port number", name, port)
		}
		h.Port = p
	}
	ic, err := ParseAddrs(v["interconnect"])
	if err != nil {
		return h, fmt.Errorf("host %s: interconnect: %v", name, err)
	}
	h.Interconnect = ic
	return h, nil
}

// CheckHost refuses what cannot be an SSH host: empty, blanks, quotes,
// brackets, '@' or '/', or colons outside an IPv6 literal ("rac1:22:x"
// was looked up as a host name and reported as unreachable).
func CheckHost(s string) error {
	switch {
	case s == "":
		return errors.New("empty host")
	case strings.ContainsAny(s, " \t'\"[]@/"):
		return errors.New("want a host name or an IP address")
	case strings.Contains(s, ":"):
		if a, err := netip.ParseAddr(s); err != nil || !a.Is6() {
			return errors.New("want a host name or an IP address (a port goes in ansible_port or HOST:PORT)")
		}
	}
	return nil
}

// ParseAddrs reads a comma (or space) separated list of IP addresses.
func ParseAddrs(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address", f)
		}
		out = append(out, a)
	}
	return out, nil
}

// group is an inventory group: its hosts (with their own variables), its
// variables and its children, whatever the file format.
type group struct {
	hosts    []string
	hostVars map[string]vars
	vars     vars
	children []string
}

type tree struct {
	groups map[string]*group
	order  []string // host names, first listed first
	seen   map[string]bool
}

func newTree() *tree {
	return &tree{groups: map[string]*group{}, seen: map[string]bool{}}
}

func (t *tree) group(name string) *group {
	g := t.groups[name]
	if g == nil {
		g = &group{hostVars: map[string]vars{}, vars: vars{}}
		t.groups[name] = g
	}
	return g
}

func (t *tree) addHost(g *group, name string, v vars) error {
	if !t.seen[name] {
		if len(t.order) >= maxHosts {
			return fmt.Errorf("more than %d hosts", maxHosts)
		}
		t.seen[name] = true
		t.order = append(t.order, name)
	}
	g.hosts = append(g.hosts, name)
	hv := g.hostVars[name]
	if hv == nil {
		hv = vars{}
		g.hostVars[name] = hv
	}
	for k, val := range v {
		hv[k] = val
	}
	return nil
}

// hosts resolves every host's variables: group variables from the
// outermost group ("all") inwards, then the host's own, as Ansible does.
func (t *tree) hosts(file string) ([]Host, error) {
	parents := map[string][]string{}
	names := make([]string, 0, len(t.groups))
	for n := range t.groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, c := range t.groups[n].children {
			parents[c] = append(parents[c], n)
		}
	}
	// depth of a group: 0 for "all", parents before children.
	depth := map[string]int{}
	var walk func(n string, seen map[string]bool) int
	walk = func(n string, seen map[string]bool) int {
		if d, ok := depth[n]; ok {
			return d
		}
		if seen[n] {
			return 0 // a cycle: Ansible refuses it too, the order then hardly matters
		}
		seen[n] = true
		d := 0
		if n != "all" {
			d = 1
		}
		for _, p := range parents[n] {
			d = max(d, walk(p, seen)+1)
		}
		depth[n] = d
		return d
	}
	for _, n := range names {
		walk(n, map[string]bool{})
	}
	sort.SliceStable(names, func(i, j int) bool { return depth[names[i]] < depth[names[j]] })
	var out []Host
	for _, h := range t.order {
		v := vars{}
		for k, val := range t.group("all").vars {
			v[k] = val
		}
		var own []vars
		for _, n := range names {
			g := t.groups[n]
			if n != "all" && member(t, n, h, map[string]bool{}) {
				for k, val := range g.vars {
					v[k] = val
				}
			}
			if hv, ok := g.hostVars[h]; ok {
				own = append(own, hv)
			}
		}
		for _, hv := range own {
			for k, val := range hv {
				v[k] = val
			}
		}
		host, err := v.host(h)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		out = append(out, host)
	}
	return out, nil
}

// member reports whether host h is in group n or one of its children.
func member(t *tree, n, h string, seen map[string]bool) bool {
	if seen[n] {
		return false
	}
	seen[n] = true
	g := t.groups[n]
	if g == nil {
		return false
	}
	if _, ok := g.hostVars[h]; ok {
		return true
	}
	for _, c := range g.children {
		if member(t, c, h, seen) {
			return true
		}
	}
	return false
}

var rangeRE = regexp.MustCompile(`\[([0-9]+):([0-9]+)\]`)

// expand expands one Ansible host range, node[01:04] -> node01 ... node04
// (numeric ranges only).
func expand(name string) ([]string, error) {
	m := rangeRE.FindStringSubmatchIndex(name)
	if m == nil {
		return []string{name}, nil
	}
	lo, hi := name[m[2]:m[3]], name[m[4]:m[5]]
	a, _ := strconv.Atoi(lo)
	b, err := strconv.Atoi(hi)
	if err != nil || b < a || b-a >= maxHosts {
		return nil, fmt.Errorf("host range %q: want [LOW:HIGH] with at most %d hosts", name, maxHosts)
	}
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	var out []string
	for i := a; i <= b; i++ {
		rest, err := expand(name[m[1]:])
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, fmt.Sprintf("%s%0*d%s", name[:m[0]], width, i, r))
		}
		if len(out) > maxHosts {
			return nil, fmt.Errorf("host range %q: more than %d hosts", name, maxHosts)
		}
	}
	return out, nil
}
