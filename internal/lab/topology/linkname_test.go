package topology_test

import (
	"testing"

	"github.com/interlink/interlink/internal/lab/topology"
)

// A VLAN's kernel name (with a dot) is a link name, so a replica of a
// cluster keeps it; what the kernel refuses or a shell splits is not.
func TestLinkNameDots(t *testing.T) {
	topo, err := topology.Parse("t.yaml", []byte("name: t\nswitches: {ic: {mtu: 9000}}\nnodes:\n  n1:\n    links:\n      - {name: bond0.100, switch: ic}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := topo.Nodes[0].Links[0]; l.Name != "bond0.100" || l.Port != "n1-bond0.100" {
		t.Errorf("link %q port %q, want bond0.100 and n1-bond0.100", l.Name, l.Port)
	}
	for _, bad := range []string{".", "..", ".x", "a b", "a/b", "a:b", "$(id)", "eth1.10000000000"} {
		if topology.CheckLinkName(bad) == nil {
			t.Errorf("CheckLinkName(%q) accepted it", bad)
		}
	}
	for _, good := range []string{"eth1", "bond0.100", "ens1f0np0", "ib0_1"} {
		if err := topology.CheckLinkName(good); err != nil {
			t.Errorf("CheckLinkName(%q): %v", good, err)
		}
	}
}
