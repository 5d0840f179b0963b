package lab

import (
	"strings"
	"testing"
)

// TestVMOnSwitches: lab set refuses a switch a VM node is on, one line
// saying what to do instead, and lets the others be.
func TestVMOnSwitches(t *testing.T) {
	topo, err := Load("vmjumbo")
	if err != nil {
		t.Fatal(err)
	}
	err = vmOnSwitches(topo, map[string]bool{"ic": true})
	if err == nil || !strings.Contains(err.Error(), "switch ic has VM node node1") || strings.Contains(err.Error(), "\n") {
		t.Errorf("set on ic: %v", err)
	}
	topo.Nodes[0].VM, topo.Nodes[1].VM, topo.Nodes[2].VM = nil, nil, nil
	if err := vmOnSwitches(topo, map[string]bool{"ic": true, "pub": true}); err != nil {
		t.Errorf("no VM node: %v", err)
	}
}

// TestVMMAC: MACs are qemu's locally administered prefix, stable, and
// unique in a lab even when two hash alike.
func TestVMMAC(t *testing.T) {
	taken := map[string]bool{}
	a := vmMAC("l", "n1", "eth1", taken)
	if !strings.HasPrefix(a, "52:54:00:") || len(a) != 17 {
		t.Errorf("MAC %q", a)
	}
	if b := vmMAC("l", "n1", "eth1", taken); b == a {
		t.Errorf("the same MAC twice: %s", a)
	}
	if c := vmMAC("l", "n1", "eth1", map[string]bool{}); c != a {
		t.Errorf("not stable: %s then %s", a, c)
	}
}
