package topology_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/lab/topology"
)

// Helpers to build topologies in Go, as built-in and test code does.

func sw(name string, mtu int) topology.SwitchSpec { return topology.SwitchSpec{Name: name, MTU: mtu} }

func ln(name, sw string, mtu int, addrs ...string) topology.LinkSpec {
	l := topology.LinkSpec{Name: name, Switch: sw, MTU: mtu, PortMTU: mtu}
	for _, a := range addrs {
		l.Addresses = append(l.Addresses, netip.MustParsePrefix(a))
	}
	return l
}

func node(name string, links ...topology.LinkSpec) topology.NodeSpec {
	return topology.NodeSpec{Name: name, Links: links}
}

func route(to, via string) topology.RouteSpec {
	r := topology.RouteSpec{}
	if to != "" {
		r.To = netip.MustParsePrefix(to)
	}
	if via != "" {
		r.Via = netip.MustParseAddr(via)
	}
	return r
}

func topo(switches []topology.SwitchSpec, nodes ...topology.NodeSpec) *topology.Topology {
	return &topology.Topology{Name: "t", Switches: switches, Nodes: nodes}
}

func with(n topology.NodeSpec, f func(*topology.NodeSpec)) topology.NodeSpec { f(&n); return n }

var swA = []topology.SwitchSpec{sw("a", 9000)}

// rules: every rule of Validate, each as a topology file and as the same
// topology built in Go. Both must be refused with the same field and
// problem; the file's error also carries the line. (Keys given twice are
// refused by Parse's decoding, with the words Validate uses for Go.)
var rules = []struct {
	name    string
	yaml    string
	built   func() *topology.Topology
	field   string
	problem string
	line    int
	first   string // the field first holding a repeated value
	// firstLine is the line of first in the file.
	firstLine int
}{
	{"lab name missing", "nodes: {n1: {}}\n",
		func() *topology.Topology { t := topo(nil, node("n1")); t.Name = ""; return t },
		"name", "missing: every lab needs a name", 1, "", 0},
	{"lab name", "name: My.Lab\nnodes: {n1: {}}\n",
		func() *topology.Topology { t := topo(nil, node("n1")); t.Name = "My.Lab"; return t },
		"name", `"My.Lab": use lower-case letters, digits, '-' and '_'`, 1, "", 0},
	{"switch name", "name: t\nswitches:\n  abcdefghijklmnop: {}\nnodes: {n1: {}}\n",
		func() *topology.Topology {
			return topo([]topology.SwitchSpec{sw("abcdefghijklmnop", 1500)}, node("n1"))
		},
		"switches.abcdefghijklmnop", `switch name "abcdefghijklmnop" is longer than 15 characters (the kernel's interface-name limit)`, 3, "", 0},
	{"switch twice", "name: t\nswitches:\n  a: {}\n  a: {}\nnodes: {n1: {}}\n",
		func() *topology.Topology {
			return topo([]topology.SwitchSpec{sw("a", 1500), sw("a", 1500)}, node("n1"))
		},
		"switches.a", "given twice", 4, "", 0},
	{"switch MTU", "name: t\nswitches:\n  a: {mtu: 70000}\nnodes: {n1: {}}\n",
		func() *topology.Topology { return topo([]topology.SwitchSpec{sw("a", 70000)}, node("n1")) },
		"switches.a.mtu", "MTU 70000 out of range 68..65535", 3, "", 0},
	{"no nodes", "name: t\nswitches: {a: {}}\nnodes: {}\n",
		func() *topology.Topology { return topo(swA) },
		"nodes", "missing or empty: a lab needs at least one node", 3, "", 0},
	{"node name", "name: t\nnodes:\n  N1: {}\n",
		func() *topology.Topology { return topo(nil, node("N1")) },
		"nodes.N1", `node name "N1": use lower-case letters, digits, '-' and '_'`, 3, "", 0},
	{"node twice", "name: t\nnodes:\n  n1: {}\n  n1: {}\n",
		func() *topology.Topology { return topo(nil, node("n1"), node("n1")) },
		"nodes.n1", "given twice", 4, "", 0},
	{"link name", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: 'e 1', switch: a}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("e 1", "a", 9000))) },
		"nodes.n1.links[0].name", `"e 1": use letters, digits, '.', '-' and '_'`, 6, "", 0},
	{"link name starting with a dot", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: .1, switch: a}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln(".1", "a", 9000))) },
		"nodes.n1.links[0].name", `".1": use letters, digits, '.', '-' and '_'`, 6, "", 0},
	{"link named lo", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: lo, switch: a}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("lo", "a", 9000))) },
		"nodes.n1.links[0].name", "lo is the node's loopback; pick another name", 6, "", 0},
	{"link twice", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth1, switch: a}\n      - {name: eth1, switch: a}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth1", "a", 9000), ln("eth1", "a", 9000))) },
		"nodes.n1.links[1].name", `link "eth1" given twice in node n1`, 7, "", 0},
	{"link without switch", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, mtu: 9000}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth0", "", 9000))) },
		"nodes.n1.links[0].switch", "missing: every link goes into a switch", 6, "", 0},
	{"unknown switch", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: b, mtu: 9000}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth0", "b", 9000))) },
		"nodes.n1.links[0].switch", `unknown switch "b" (switches: a)`, 6, "", 0},
	{"switch ports", bigYAML(topology.MaxSwitchPorts + 1),
		func() *topology.Topology { return bigBuilt(topology.MaxSwitchPorts + 1) },
		fmt.Sprintf("nodes.n%d.links[0].switch", topology.MaxSwitchPorts), "switch a: more than 1024 links (a Linux bridge has at most 1024 ports)", 4 + topology.MaxSwitchPorts, "", 0},
	{"link MTU", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, mtu: 67}\n",
		func() *topology.Topology {
			l := ln("eth0", "a", 9000)
			l.MTU = 67
			return topo(swA, node("n1", l))
		},
		"nodes.n1.links[0].mtu", "MTU 67 out of range 68..65535", 6, "", 0},
	{"port MTU", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, port_mtu: 65536}\n",
		func() *topology.Topology {
			l := ln("eth0", "a", 9000)
			l.PortMTU = 65536
			return topo(swA, node("n1", l))
		},
		"nodes.n1.links[0].port_mtu", "MTU 65536 out of range 68..65535", 6, "", 0},
	{"rate", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, rate: 1kbit}\n",
		func() *topology.Topology {
			l := ln("eth0", "a", 9000)
			l.RateBitsPerSec = 1000
			return topo(swA, node("n1", l))
		},
		"nodes.n1.links[0].rate", "rate 1.0 Kbit/s out of range 8.0 Kbit/s..400.00 Gbit/s", 6, "", 0},
	{"special address", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - name: eth0\n        switch: a\n        addresses: [198.18.0.1/24, 127.0.0.2/8]\n",
		func() *topology.Topology {
			return topo(swA, node("n1", ln("eth0", "a", 9000, "198.18.0.1/24", "127.0.0.2/8")))
		},
		"nodes.n1.links[0].addresses[1]", "127.0.0.2/8 cannot be a lab address (loopback, multicast, link-local, unspecified and mapped addresses are refused)", 8, "", 0},
	{"network address", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, addresses: [198.18.0.0/24]}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth0", "a", 9000, "198.18.0.0/24"))) },
		"nodes.n1.links[0].addresses[0]", "198.18.0.0/24 is the network address of its subnet", 6, "", 0},
	{"broadcast address", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, addresses: [198.18.0.255/24]}\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth0", "a", 9000, "198.18.0.255/24"))) },
		"nodes.n1.links[0].addresses[0]", "198.18.0.255/24 is the broadcast address of its subnet", 6, "", 0},
	{"IPv6 below 1280", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - name: eth0\n        switch: a\n        addresses: [fd00::1/64]\n        mtu: 1000\n",
		func() *topology.Topology { return topo(swA, node("n1", ln("eth0", "a", 1000, "fd00::1/64"))) },
		"nodes.n1.links[0].mtu", "MTU 1000 is below 1280, the IPv6 minimum, and the link has IPv6 address fd00::1/64", 9, "", 0},
	{"duplicate address", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links: [{name: eth0, switch: a, addresses: [198.18.0.1/24]}]\n  n2:\n    links:\n      - name: eth0\n        switch: a\n        addresses: [198.18.0.2/24, 198.18.0.1/16]\n",
		func() *topology.Topology {
			return topo(swA, node("n1", ln("eth0", "a", 9000, "198.18.0.1/24")), node("n2", ln("eth0", "a", 9000, "198.18.0.2/24", "198.18.0.1/16")))
		},
		"nodes.n2.links[0].addresses[1]", "duplicate address 198.18.0.1", 10, "nodes.n1.links[0].addresses[0]", 5},
	{"route without gateway", routeYAML("{to: 198.18.9.0/24}"),
		func() *topology.Topology { return routeBuilt(route("198.18.9.0/24", "")) },
		"nodes.n1.routes[0].via", "missing: the gateway of the route", 7, "", 0},
	{"route without destination", routeYAML("{via: 198.18.0.2}"),
		func() *topology.Topology { return routeBuilt(route("", "198.18.0.2")) },
		"nodes.n1.routes[0].to", "missing: the destination prefix (or default)", 7, "", 0},
	{"route families", routeYAML("{to: 198.18.9.0/24, via: 'fd00::2'}"),
		func() *topology.Topology { return routeBuilt(route("198.18.9.0/24", "fd00::2")) },
		"nodes.n1.routes[0].via", "gateway fd00::2 and destination 198.18.9.0/24 are of different IP versions", 7, "", 0},
	{"route via itself", routeYAML("{to: default, via: 198.18.0.1}"),
		func() *topology.Topology { return routeBuilt(route("0.0.0.0/0", "198.18.0.1")) },
		"nodes.n1.routes[0].via", "gateway 198.18.0.1 is the node's own address", 7, "", 0},
	{"route off-link", routeYAML("{to: default, via: 198.18.1.1}"),
		func() *topology.Topology { return routeBuilt(route("0.0.0.0/0", "198.18.1.1")) },
		"nodes.n1.routes[0].via", "gateway 198.18.1.1 is not on any link of this node", 7, "", 0},
	{"route twice", routeYAML("{to: default, via: 198.18.0.2}, {to: 0.0.0.0/0, via: 198.18.0.3}"),
		func() *topology.Topology {
			return routeBuilt(route("0.0.0.0/0", "198.18.0.2"), route("0.0.0.0/0", "198.18.0.3"))
		},
		"nodes.n1.routes[1].to", "route to 0.0.0.0/0 given twice", 7, "", 0},
	{"service kind", serviceYAML("[{kind: smb}]"),
		func() *topology.Topology { return serviceBuilt(topology.ServiceSpec{Kind: "smb"}) },
		"nodes.n2.services[0]", `unknown kind "smb" (known: agent, postgres, primary, standby, nfs, galera, sshd)`, 10, "", 0},
	{"service role", serviceYAML("[{kind: postgres}]"),
		func() *topology.Topology { return serviceBuilt(topology.ServiceSpec{Kind: topology.KindPostgres}) },
		"nodes.n2.services[0]", "missing role: primary or standby", 10, "", 0},
	{"nfs port", serviceYAML("[{kind: nfs, port: 2050}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindNFS, Port: 2050})
		},
		"nodes.n2.services[0]", "an nfs service listens on 2049 (port 2050: the lab's ganesha uses the NFS port)", 10, "", 0},
	{"service port", "", // a file cannot say port 70000: TestServicesBad
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindAgent, Port: 70000})
		},
		"nodes.n2.services[0]", "port 70000 out of range 1..65535", 0, "", 0},
	{"service twice", serviceYAML("[{kind: agent}, {kind: agent, port: 7000}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindAgent}, topology.ServiceSpec{Kind: topology.KindAgent, Port: 7000})
		},
		"nodes.n2.services[1]", "a node runs one agent service; this is the second", 10, "", 0},
	{"postgres without address", "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links: [{name: eth0, switch: a}]\n    services: [{kind: primary}]\n",
		func() *topology.Topology {
			return topo(swA, with(node("n1", ln("eth0", "a", 9000)), func(n *topology.NodeSpec) {
				n.Services = []topology.ServiceSpec{{Kind: topology.KindPostgres, Role: topology.RolePrimary}}
			}))
		},
		"nodes.n1.services[0]", "PostgreSQL needs an address on one of the node's links", 6, "", 0},
	{"standby of itself", serviceYAML("[{kind: standby, primary: n2}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindPostgres, Role: topology.RoleStandby, Primary: "n2", Sync: true})
		},
		"nodes.n2.services[0]", `primary "n2" is not another node of the lab`, 10, "", 0},
	{"standby of no primary", serviceYAML("[{kind: standby, primary: n3}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindPostgres, Role: topology.RoleStandby, Primary: "n3", Sync: true})
		},
		"nodes.n2.services[0]", "node n3 runs no PostgreSQL primary", 10, "", 0},
	{"standby without switch", serviceYAML("[{kind: standby, primary: n1}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindPostgres, Role: topology.RoleStandby, Primary: "n1", Sync: true})
		},
		"nodes.n2.services[0]", "no switch connects it to n1 with addresses on both sides", 10, "", 0},
	{"standby via", serviceYAML("[{kind: standby, primary: n1, via: a}]"),
		func() *topology.Topology {
			return serviceBuilt(topology.ServiceSpec{Kind: topology.KindPostgres, Role: topology.RoleStandby, Primary: "n1", Via: "a", Sync: true})
		},
		"nodes.n2.services[0]", `via "a": n2 and n1 need addresses on that switch`, 10, "", 0},
}

// routeYAML is n1 on switch a (198.18.0.1/24) with the routes given.
func routeYAML(routes string) string {
	return "name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: eth0, switch: a, addresses: [198.18.0.1/24, 'fd00::1/64']}\n    routes: [" + routes + "]\n"
}

func routeBuilt(routes ...topology.RouteSpec) *topology.Topology {
	n := node("n1", ln("eth0", "a", 9000, "198.18.0.1/24", "fd00::1/64"))
	n.Routes = routes
	return topo(swA, n)
}

// serviceYAML is n1, a PostgreSQL primary with no address on switch a and
// one on b, n3 with nothing, and n2 with no address on b and one on a,
// with the services given (on line 10).
func serviceYAML(services string) string {
	return `name: t
switches: {a: {mtu: 9000}, b: {mtu: 9000}}
nodes:
  n1:
    links: [{name: eth0, switch: a}, {name: eth1, switch: b, addresses: [198.18.1.1/24]}]
    services: [{kind: primary}]
  n3: {}
  n2:
    links: [{name: eth0, switch: b}, {name: eth1, switch: a, addresses: [198.18.0.2/24]}]
    services: ` + services + "\n"
}

func serviceBuilt(services ...topology.ServiceSpec) *topology.Topology {
	sws := []topology.SwitchSpec{sw("a", 9000), sw("b", 9000)}
	n1 := node("n1", ln("eth0", "a", 9000), ln("eth1", "b", 9000, "198.18.1.1/24"))
	n1.Services = []topology.ServiceSpec{{Kind: topology.KindPostgres, Role: topology.RolePrimary}}
	n2 := node("n2", ln("eth0", "b", 9000), ln("eth1", "a", 9000, "198.18.0.2/24"))
	n2.Services = services
	return topo(sws, n1, node("n3"), n2)
}

// bigYAML and bigBuilt are n nodes with one link each into switch a.
func bigYAML(n int) string {
	var b strings.Builder
	b.WriteString("name: t\nswitches: {a: {mtu: 9000}}\nnodes:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  n%d: {links: [{name: eth0, switch: a}]}\n", i)
	}
	return b.String()
}

func bigBuilt(n int) *topology.Topology {
	t := topo(swA)
	for i := 0; i < n; i++ {
		t.Nodes = append(t.Nodes, node(fmt.Sprintf("n%d", i), ln("eth0", "a", 9000)))
	}
	return t
}

func TestValidateRules(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			built := r.built()
			err := built.Validate()
			var be *topology.TopologyError
			if !errors.As(err, &be) || !errors.Is(err, topology.ErrInvalid) {
				t.Fatalf("built: Validate = %v, want a *TopologyError wrapping ErrInvalid", err)
			}
			if be.Field != r.field || be.Problem != r.problem || be.First != r.first || be.Line != 0 || be.File != "" {
				t.Errorf("built: field %q problem %q first %q line %d file %q\n  want field %q problem %q first %q",
					be.Field, be.Problem, be.First, be.Line, be.File, r.field, r.problem, r.first)
			}
			want := "lab t: invalid topology: " + r.field + ": "
			if r.field == "name" {
				want = "invalid topology: name: " // not a name to call the lab by
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("built: %q does not start with %q", err, want)
			}
			if r.yaml == "" {
				return // a rule only Go can break
			}
			top, err := topology.Parse("t.yaml", []byte(r.yaml))
			var pe *topology.TopologyError
			if !errors.As(err, &pe) || !errors.Is(err, topology.ErrInvalid) {
				t.Fatalf("parsed: %+v, %v; want a *TopologyError wrapping ErrInvalid", top, err)
			}
			if pe.Field != be.Field || pe.Problem != be.Problem || pe.First != be.First {
				t.Errorf("parsed and built differ:\n  parsed %q: %s (first %q)\n  built  %q: %s (first %q)", pe.Field, pe.Problem, pe.First, be.Field, be.Problem, be.First)
			}
			if pe.File != "t.yaml" || pe.Line != r.line || pe.FirstLine != r.firstLine {
				t.Errorf("parsed: %s: line %d (first at %d), want t.yaml line %d (first at %d)", err, pe.Line, pe.FirstLine, r.line, r.firstLine)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("t.yaml:%d: ", r.line)) {
				t.Errorf("parsed: %q does not start with FILE:LINE", err)
			}
		})
	}
}

// TestValidateRulesBaseline: with the broken part mended, the file and the
// Go topology of the table's families are valid and the same.
func TestValidateRulesBaseline(t *testing.T) {
	for _, c := range []struct {
		yaml  string
		built *topology.Topology
	}{
		{routeYAML("{to: default, via: 198.18.0.2}, {to: 'fd00:9::/64', via: 'fd00::2'}"),
			routeBuilt(route("0.0.0.0/0", "198.18.0.2"), route("fd00:9::/64", "fd00::2"))},
		{serviceYAML("[{kind: agent}, {kind: nfs}]"),
			serviceBuilt(topology.ServiceSpec{Kind: topology.KindAgent}, topology.ServiceSpec{Kind: topology.KindNFS})},
		{bigYAML(topology.MaxSwitchPorts), bigBuilt(topology.MaxSwitchPorts)},
	} {
		parsed, err := topology.Parse("t.yaml", []byte(c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.built.Validate(); err != nil {
			t.Fatal(err)
		}
		parsed.File = ""
		if !equalTopology(parsed, c.built) {
			t.Errorf("parsed %+v\nbuilt  %+v", parsed, c.built)
		}
	}
}
