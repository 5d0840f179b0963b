package topology

import (
	"errors"
	"strings"
	"testing"
)

func TestApplySettings(t *testing.T) {
	topo, err := Load("demo")
	if err != nil {
		t.Fatal(err)
	}
	before := topo.Nodes[0].Links[0].MTU
	set := func(target string, kv ...string) (*Topology, error) {
		s, err := ParseSettings(target, kv)
		if err != nil {
			return nil, err
		}
		return Apply(topo, s)
	}
	nt, err := set("ic", "mtu=1500", "rate=1gbit")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nt.Nodes {
		for _, l := range n.Links {
			if l.Switch == "ic" && (l.MTU != 1500 || l.PortMTU != 1500 || l.RateBitsPerSec != 1e9) {
				t.Errorf("%s:%s after ic mtu=1500 rate=1gbit: %+v", n.Name, l.Name, l)
			}
			if l.Switch != "ic" && l.RateBitsPerSec != 0 {
				t.Errorf("%s:%s on another switch was shaped", n.Name, l.Name)
			}
		}
	}
	if topo.Nodes[0].Links[0].MTU != before {
		t.Error("Apply changed the topology it was given")
	}
	nt, err = set("node3:eth1", "port_mtu=9000")
	if err != nil || nt.Nodes[2].Links[1].PortMTU != 9000 {
		t.Errorf("node3:eth1 port_mtu=9000: %v %+v", err, nt)
	}
	for _, tc := range []struct {
		target string
		kv     []string
		want   string
	}{
		{"ic", nil, "nothing to set"},
		{"ic", []string{"mtu"}, "want KEY=VALUE"},
		{"ic", []string{"speed=10"}, `unknown setting "speed"`},
		{"ic", []string{"mtu=1500", "mtu=9000"}, `mtu given twice (mtu=1500 and "mtu=9000")`},
		{"node1:eth1", []string{"rate=1GB"}, "a capital B means bytes"},
		{"ic", []string{"mtu=70000"}, "want an MTU of 68 to 65535"},
		{"ic", []string{"rate=fast"}, "want a rate"},
		{"nosw", []string{"mtu=1500"}, "no switch nosw"},
		{"node9:eth1", []string{"mtu=1500"}, "no node node9"},
		{"node1:eth7", []string{"mtu=1500"}, "node node1 has no link eth7"},
	} {
		_, err := set(tc.target, tc.kv...)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.target, tc.kv, err, tc.want)
		}
	}
}
