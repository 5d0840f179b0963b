package lab

import (
	"encoding/json"
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

// TestVMStatusWithoutRecord: a VM node lab up never reached (killed before
// it recorded the boot) has no kernel or accelerator: n/a in text, absent
// in JSON, never an empty field.
func TestVMStatusWithoutRecord(t *testing.T) {
	s := &Status{Name: "l", State: StateIncomplete, Nodes: []NodeStatus{{Name: "a",
		VM: &VMStatus{State: VMStopped, MemoryBytes: 512 << 20, CPUs: 1, Console: "/c"}}}}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "vm a: stopped, kernel n/a, n/a, 512.00 MiB, 1 CPU, pid -, console /c"; !strings.Contains(b.String(), want) {
		t.Errorf("text:\n%s\nwant a line %q", b.String(), want)
	}
	data, err := json.Marshal(s.Nodes[0].VM)
	if err != nil {
		t.Fatal(err)
	}
	if j := string(data); strings.Contains(j, `"kernel"`) || strings.Contains(j, `"accel"`) {
		t.Errorf("JSON %s has a kernel or accel it does not know", j)
	}
	s.Nodes[0].VM.Kernel, s.Nodes[0].VM.Release, s.Nodes[0].VM.Accel = "debian:linux-image-6.1.0-56-amd64", "6.1.0-56-amd64", "tcg"
	b.Reset()
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "kernel 6.1.0-56-amd64 (debian:linux-image-6.1.0-56-amd64), tcg,"; !strings.Contains(b.String(), want) {
		t.Errorf("text:\n%s\nwant %q", b.String(), want)
	}
}
