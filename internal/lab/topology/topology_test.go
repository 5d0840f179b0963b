package topology_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/lab/topology"
)

// issueExample is the topology from issue 3, verbatim.
const issueExample = `name: rac                      # lab name; everything the lab creates carries it
switches:
  priv: {mtu: 9000}            # a bridge; its ports default to this MTU
  pub:  {mtu: 1500}
  wan:  {mtu: 1400}
nodes:
  node1:
    links:
      - {name: eth1, switch: priv, address: 198.18.10.1/24, mtu: 9000}
      - {name: eth0, switch: pub,  address: 198.18.99.1/24}
    routes: [{to: 198.18.20.0/24, via: 198.18.10.254}]
  node2:
    links:
      - {name: eth1, switch: priv, address: 198.18.10.2/24, mtu: 9000, port_mtu: 1500}  # switch port left at 1500
      - {name: eth0, switch: pub,  address: 198.18.99.2/24, rate: 1gbit}                # shaped link
  r1:
    forward: true              # a router: forwards, and answers "fragmentation needed"
    links:
      - {switch: priv, address: 198.18.10.254/24, mtu: 9000}
      - {switch: wan,  address: 198.18.20.254/24, mtu: 1400}
  node3:
    links:
      - {name: eth1, switch: wan, address: 198.18.20.3/24, mtu: 1400}
    routes: [{to: 198.18.10.0/24, via: 198.18.20.254}]
`

func TestParseIssueExample(t *testing.T) {
	top, err := topology.Parse("rac.yaml", []byte(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	if top.Name != "rac" || len(top.Switches) != 3 || len(top.Nodes) != 4 {
		t.Fatalf("parsed %+v", top)
	}
	n2 := top.Nodes[1]
	if n2.Name != "node2" || n2.Links[0].PortMTU != 1500 || n2.Links[0].MTU != 9000 || n2.Links[1].RateBitsPerSec != 1e9 {
		t.Errorf("node2 = %+v", n2)
	}
	if n2.Links[1].MTU != 1500 || n2.Links[1].PortMTU != 1500 {
		t.Errorf("node2 eth0 should default to the pub switch's MTU 1500: %+v", n2.Links[1])
	}
	r1 := top.Nodes[2]
	if !r1.Forward || r1.Links[0].Name != "eth0" || r1.Links[1].Name != "eth1" {
		t.Errorf("r1 = %+v; want forward and default link names eth0, eth1", r1)
	}
	if want := netip.MustParsePrefix("198.18.20.254/24"); r1.Links[1].Addresses[0] != want {
		t.Errorf("r1 eth1 address %v", r1.Links[1].Addresses)
	}
	if r := top.Nodes[3].Routes[0]; r.To.String() != "198.18.10.0/24" || r.Via.String() != "198.18.20.254" {
		t.Errorf("node3 route %+v", r)
	}
	ports := map[string]bool{}
	for _, n := range top.Nodes {
		for _, l := range n.Links {
			if len(l.Port) > 15 || ports[l.Port] {
				t.Errorf("port name %q too long or used twice", l.Port)
			}
			ports[l.Port] = true
		}
	}
}

func TestBuiltinsParse(t *testing.T) {
	for _, b := range topology.Builtins() {
		top, err := topology.Load(b.Name)
		if err != nil {
			t.Errorf("%s: %v", b.Name, err)
			continue
		}
		if top.Name != b.Name || top.File != "builtin:"+b.Name {
			t.Errorf("%s: name %q file %q", b.Name, top.Name, top.File)
		}
		for _, n := range top.Nodes {
			var v4, v6 bool
			for _, a := range n.Addresses() {
				v4, v6 = v4 || a.Addr().Is4(), v6 || a.Addr().Is6()
				if a.Addr().Is4() && !netip.MustParsePrefix("198.18.0.0/15").Contains(a.Addr()) ||
					a.Addr().Is6() && !netip.MustParsePrefix("fd00::/8").Contains(a.Addr()) {
					t.Errorf("%s %s: address %s outside 198.18.0.0/15 and fd00::/8", b.Name, n.Name, a)
				}
			}
			if !v4 || !v6 {
				t.Errorf("%s %s: want IPv4 and IPv6 addresses", b.Name, n.Name)
			}
		}
	}
	for _, want := range []string{"jumbo", "blackhole", "routed", "mixed"} {
		if _, err := topology.Load(want); err != nil {
			t.Errorf("built-in %s: %v", want, err)
		}
	}
	if _, err := topology.Load("no-such-builtin"); err == nil || !strings.Contains(err.Error(), "jumbo") {
		t.Errorf("unknown built-in: %v; want an error listing the built-ins", err)
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rac.yaml")
	if err := os.WriteFile(p, []byte(issueExample), 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := topology.Load(p)
	if err != nil || top.File != p {
		t.Fatalf("Load(%s) = %+v, %v", p, top, err)
	}
}

// badTopologies: each is refused with FILE:LINE: field: problem.
var badTopologies = []struct {
	name, yaml, want string // want: regexp the error must match
}{
	{"unknown switch", `name: x
switches: {a: {mtu: 9000}}
nodes:
  n1:
    links:
      - {switch: b, address: 198.18.0.1/24}
`, `^bad\.yaml:6: nodes\.n1\.links\[0\]\.switch: unknown switch "b" \(switches: a\)$`},
	{"duplicate address", `name: x
switches: {a: {}}
nodes:
  n1:
    links: [{switch: a, address: 198.18.0.1/24}]
  n2:
    links:
      - switch: a
        addresses: [198.18.0.2/24, 198.18.0.1/24]
`, `^bad\.yaml:9: nodes\.n2\.links\[0\]\.addresses\[1\]: duplicate address 198\.18\.0\.1 \(already used by nodes\.n1\.links\[0\]\.address at line 5\)$`},
	{"MTU out of range", `name: x
switches:
  a: {mtu: 70000}
nodes: {n1: {}}
`, `^bad\.yaml:3: switches\.a\.mtu: MTU 70000 out of range 68\.\.65535$`},
	{"link MTU too small", `name: x
switches: {a: {}}
nodes:
  n1:
    links: [{switch: a, mtu: 67}]
`, `^bad\.yaml:5: nodes\.n1\.links\[0\]\.mtu: MTU 67 out of range`},
	{"IPv6 below 1280", `name: x
switches: {a: {}}
nodes:
  n1:
    links:
      - {switch: a, mtu: 1000, address: fd00::1/64}
`, `^bad\.yaml:6: nodes\.n1\.links\[0\]\.mtu: MTU 1000 is below 1280`},
	{"bad YAML", "name: x\nswitches: {a: {mtu: 9000}\nnodes: {}\n", `^bad\.yaml:\d+: bad YAML: `},
	{"tab YAML", "name: x\n\tswitches: {}\n", `^bad\.yaml:2: bad YAML: `},
	{"unknown field", `name: x
switches: {a: {}}
nodes:
  n1:
    links:
      - {switch: a, adress: 198.18.0.1/24}
`, `^bad\.yaml:6: nodes\.n1\.links\[0\]\.adress: unknown field \(known: name, switch, address, addresses, mtu, port_mtu, rate, loss\)$`},
	{"unknown top-level field", "name: x\nnode: {}\n", `^bad\.yaml:2: node: unknown field`},
	{"missing name", "nodes: {n1: {}}\n", `^bad\.yaml:1: name: missing`},
	{"bad lab name", "name: My.Lab\nnodes: {n1: {}}\n", `^bad\.yaml:1: name: "My\.Lab": use lower-case`},
	{"no nodes", "name: x\n", `^bad\.yaml:1: nodes: missing`},
	{"empty", "", `^bad\.yaml:1: empty topology`},
	{"not a mapping", "- a\n- b\n", `^bad\.yaml:1: want a mapping, got a list$`},
	// A file of another kind is quoted by its start only (the whole of
	// /etc/passwd was the one line).
	{"a text file", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
		`^bad\.yaml:1: want a mapping, got "root:x:0:0:root:/root:/bin/bash daemon:x"\.\.\. \(79 bytes\)$`},
	{"address without length", `name: x
switches: {a: {}}
nodes:
  n1: {links: [{switch: a, address: 198.18.0.1}]}
`, `^bad\.yaml:4: nodes\.n1\.links\[0\]\.address: "198\.18\.0\.1" has no prefix length`},
	{"network address", `name: x
switches: {a: {}}
nodes:
  n1: {links: [{switch: a, address: 198.18.0.0/24}]}
`, `^bad\.yaml:4: .*is the network address`},
	{"gateway off-link", `name: x
switches: {a: {}}
nodes:
  n1:
    links: [{switch: a, address: 198.18.0.1/24}]
    routes: [{to: default, via: 198.18.1.1}]
`, `^bad\.yaml:6: nodes\.n1\.routes\[0\]\.via: gateway 198\.18\.1\.1 is not on any link of this node$`},
	{"mixed families", `name: x
switches: {a: {}}
nodes:
  n1:
    links: [{switch: a, addresses: [198.18.0.1/24, "fd00::1/64"]}]
    routes: [{to: 198.18.9.0/24, via: "fd00::2"}]
`, `^bad\.yaml:6: nodes\.n1\.routes\[0\]\.via: gateway fd00::2 and destination 198\.18\.9\.0/24 are of different IP versions$`},
	{"duplicate link name", `name: x
switches: {a: {}}
nodes:
  n1:
    links: [{switch: a, name: eth1}, {switch: a, name: eth1}]
`, `^bad\.yaml:5: nodes\.n1\.links\[1\]\.name: link "eth1" given twice in node n1$`},
	{"duplicate key", "name: x\nname: y\nnodes: {n1: {}}\n", `^bad\.yaml:2: name: given twice$`},
	{"long switch name", "name: x\nswitches: {abcdefghijklmnop: {}}\nnodes: {n1: {}}\n", `^bad\.yaml:2: switches\.abcdefghijklmnop: switch name .* longer than 15`},
	{"bad rate", `name: x
switches: {a: {}}
nodes:
  n1: {links: [{switch: a, rate: fast}]}
`, `^bad\.yaml:4: nodes\.n1\.links\[0\]\.rate: "fast" is not a rate`},
	{"forward not bool", "name: x\nnodes: {n1: {forward: maybe}}\n", `^bad\.yaml:2: nodes\.n1\.forward: want true or false, got "maybe"$`},
	{"link named lo", "name: x\nswitches: {a: {}}\nnodes: {n1: {links: [{switch: a, name: lo}]}}\n", `^bad\.yaml:3: nodes\.n1\.links\[0\]\.name: lo is the node's loopback`},
}

func TestParseRefusesBadTopologies(t *testing.T) {
	for _, c := range badTopologies {
		t.Run(c.name, func(t *testing.T) {
			top, err := topology.Parse("bad.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("accepted: %+v", top)
			}
			if !errors.Is(err, topology.ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Errorf("error\n  %s\nwant match\n  %s", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// FuzzParse: any input gives a topology or a TopologyError, never a panic.
// A topology Parse accepts keeps its invariants, validates again without
// a change, and written back as YAML (MarshalYAML) parses to the same
// topology.
func FuzzParse(f *testing.F) {
	f.Add([]byte(issueExample))
	for _, c := range badTopologies {
		f.Add([]byte(c.yaml))
	}
	for _, r := range rules {
		if len(r.yaml) < 4096 {
			f.Add([]byte(r.yaml))
		}
	}
	for _, b := range topology.Builtins() {
		data, _ := topology.BuiltinYAML(b.Name)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		top, err := topology.Parse("fuzz.yaml", data)
		if err != nil {
			var te *topology.TopologyError
			if !errors.As(err, &te) || te.File != "fuzz.yaml" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of type %T, or without the file, or not one line: %q", err, err)
			}
			return
		}
		switches := map[string]int{}
		for _, s := range top.Switches {
			switches[s.Name] = s.MTU
		}
		seen := map[netip.Addr]bool{}
		for _, n := range top.Nodes {
			for _, l := range n.Links {
				if _, ok := switches[l.Switch]; !ok {
					t.Fatalf("link into unknown switch %q accepted", l.Switch)
				}
				if l.MTU < topology.MinMTU || l.MTU > topology.MaxMTU || l.PortMTU < topology.MinMTU || l.PortMTU > topology.MaxMTU {
					t.Fatalf("MTU out of range accepted: %+v", l)
				}
				if len(l.Name) > 15 || len(l.Port) > 15 || l.Port == "" {
					t.Fatalf("bad interface names accepted: %+v", l)
				}
				for _, a := range l.Addresses {
					if seen[a.Addr()] {
						t.Fatalf("duplicate address %s accepted", a)
					}
					seen[a.Addr()] = true
				}
			}
		}
		again, _ := topology.Parse("fuzz.yaml", data)
		if err := again.Validate(); err != nil || !equalTopology(again, top) {
			t.Fatalf("Validate of a parsed topology: %v, or it changed it:\n%+v\n%+v", err, again, top)
		}
		out, err := yaml.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		back, err := topology.Parse("fuzz.yaml", out)
		if err != nil || !equalTopology(back, top) {
			t.Fatalf("written back:\n%s\nparsed: %v\n%+v\nwant\n%+v", out, err, back, top)
		}
	})
}

func equalTopology(a, b *topology.Topology) bool { return reflect.DeepEqual(a, b) }

// TestBuiltinsValidate: every built-in topology validates as it is, again
// after Validate (which fills defaults), and round-trips through YAML.
func TestBuiltinsValidate(t *testing.T) {
	for _, b := range topology.Builtins() {
		top, err := topology.Load(b.Name)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		if err := top.Validate(); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		out, err := yaml.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		back, err := topology.Parse(top.File, out)
		if err != nil || !equalTopology(back, top) {
			t.Errorf("%s written back:\n%s\nparsed: %v\n%+v\nwant\n%+v", b.Name, out, err, back, top)
		}
	}
	for _, mtu := range []int{1500, 9000} {
		top, err := topology.Pair("pair", mtu, "1gbit")
		if err != nil {
			t.Fatal(err)
		}
		if err := top.Validate(); err != nil {
			t.Errorf("pair %d: %v", mtu, err)
		}
	}
}

// TestValidate: a topology changed in Go is checked again before Up.
func TestValidate(t *testing.T) {
	for what, change := range map[string]func(*topology.Topology){
		"bad name":          func(t *topology.Topology) { t.Name = "No Good" },
		"unknown switch":    func(t *topology.Topology) { t.Nodes[0].Links[0].Switch = "nope" },
		"MTU":               func(t *topology.Topology) { t.Nodes[1].Links[0].PortMTU = 70000 },
		"duplicate address": func(t *topology.Topology) { t.Nodes[1].Links[0].Addresses = t.Nodes[0].Links[0].Addresses },
		"duplicate node":    func(t *topology.Topology) { t.Nodes[1].Name = t.Nodes[0].Name },
		"route off-link":    func(t *topology.Topology) { t.Nodes[0].Routes[0].Via = netip.MustParseAddr("198.18.77.1") },
	} {
		top, err := topology.Load("routed")
		if err != nil {
			t.Fatal(err)
		}
		if err := top.Validate(); err != nil {
			t.Fatalf("routed: %v", err)
		}
		change(top)
		if err := top.Validate(); !errors.Is(err, topology.ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", what, err)
		}
	}
}

func TestPair(t *testing.T) {
	topo, err := topology.Pair("t3-pair", 1500, "1gbit")
	if err != nil {
		t.Fatal(err)
	}
	if topo.Name != "t3-pair" || len(topo.Nodes) != 2 {
		t.Errorf("pair: %+v", topo)
	}
	if _, err := topology.Pair("t3-pair", 70000, ""); err == nil {
		t.Error("MTU 70000 accepted")
	}
	if _, err := topology.Pair("t3-pair", 9000, "fast"); err == nil {
		t.Error("rate \"fast\" accepted")
	}
}

// A switch takes at most 1024 links (the bridge's port limit): 1025 nodes
// on one switch are refused at validation, not after minutes of lab up.
func TestValidateBridgePortLimit(t *testing.T) {
	build := func(n int) *topology.Topology {
		top := &topology.Topology{Name: "big", Switches: []topology.SwitchSpec{{Name: "ic", MTU: 9000}}}
		for i := 0; i < n; i++ {
			a := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i / 250), byte(1 + i%250)}), 16)
			top.Nodes = append(top.Nodes, topology.NodeSpec{Name: fmt.Sprintf("n%d", i),
				Links: []topology.LinkSpec{{Name: "eth1", Switch: "ic", MTU: 9000, PortMTU: 9000, Addresses: []netip.Prefix{a}}}})
		}
		return top
	}
	if err := build(topology.MaxSwitchPorts).Validate(); err != nil {
		t.Fatalf("%d links: %v", topology.MaxSwitchPorts, err)
	}
	err := build(topology.MaxSwitchPorts + 1).Validate()
	if !errors.Is(err, topology.ErrInvalid) || !strings.Contains(err.Error(), "switch ic: more than 1024 links") {
		t.Errorf("1025 links: %v", err)
	}
}

// TestParseRefusesTooManyNodes: 10 000 nodes without links passed, and
// lab up set out to build 10 000 namespaces.
func TestParseRefusesTooManyNodes(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nnodes:\n")
	for i := 0; i <= topology.MaxNodes; i++ {
		fmt.Fprintf(&b, "  n%d: {}\n", i)
	}
	_, err := topology.Parse("big.yaml", []byte(b.String()))
	want := fmt.Sprintf("big.yaml:3: nodes: %d nodes: a lab takes at most %d", topology.MaxNodes+1, topology.MaxNodes)
	if !errors.Is(err, topology.ErrInvalid) || err == nil || err.Error() != want {
		t.Errorf("%d nodes: %v, want %s", topology.MaxNodes+1, err, want)
	}
}
