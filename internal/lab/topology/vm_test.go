package topology_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/lab/topology"
)

// TestParseVM: a node's vm: mapping, its defaults, a kernel path relative
// to the file, and the built-in vmjumbo.
func TestParseVM(t *testing.T) {
	src := `name: v
switches: {ic: {mtu: 9000}}
nodes:
  a:
    vm: {}
    links: [{switch: ic, address: 198.18.10.1/24}]
    services: [{kind: agent}]
  b:
    vm: {kernel: k/bzImage, modules: k/modules, memory: 1G, cpus: 2}
    links: [{switch: ic, address: 198.18.10.2/24}]
  c:
    links: [{switch: ic, address: 198.18.10.3/24}]
`
	topo, err := topology.Parse("/etc/labs/v.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := topo.Nodes[0], topo.Nodes[1], topo.Nodes[2]
	if !a.IsVM() || *a.VM != (topology.VMSpec{MemoryBytes: topology.DefaultVMMemory, CPUs: 1}) {
		t.Errorf("a.VM = %+v, want the defaults (Debian's kernel, 512 MiB, 1 CPU)", a.VM)
	}
	want := topology.VMSpec{Kernel: "/etc/labs/k/bzImage", Modules: "/etc/labs/k/modules", MemoryBytes: 1 << 30, CPUs: 2}
	if !b.IsVM() || *b.VM != want {
		t.Errorf("b.VM = %+v, want %+v", b.VM, want)
	}
	if c.IsVM() {
		t.Errorf("c is a namespace node, got VM %+v", c.VM)
	}
	vj, err := topology.Load("vmjumbo")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range vj.Nodes[:3] {
		if !n.IsVM() || n.Service(topology.KindAgent) == nil || n.Service(topology.KindSSHD) == nil || n.Links[1].MTU != 9000 {
			t.Errorf("vmjumbo %s: %+v, want a VM at 9000 with an agent and sshd", n.Name, n)
		}
	}
	if ops := vj.Nodes[3]; ops.IsVM() || ops.Name != "ops" {
		t.Errorf("vmjumbo's 4th node %+v, want ops, a namespace node", ops)
	}
	if p := vj.Nodes[1].Links[1].PortMTU; p != 1500 {
		t.Errorf("vmjumbo node2's port MTU %d, want 1500", p)
	}
}

// TestParseVMRefused: what a VM node cannot be, each one line naming the
// field and its line.
func TestParseVMRefused(t *testing.T) {
	for _, tc := range []struct{ vm, extra, want string }{
		{`{memory: 64M}`, "", "v.yaml:5: nodes.a.vm.memory: 64.00 MiB is too little for a VM node (at least 128.00 MiB)"},
		{`{memory: lots}`, "", `v.yaml:5: nodes.a.vm.memory: "lots" is not a size`},
		{`{cpus: 0}`, "", "v.yaml:5: nodes.a.vm.cpus: 0 CPUs out of range 1..64"},
		{`{cpus: two}`, "", `v.yaml:5: nodes.a.vm.cpus: "two" is not a number of CPUs`},
		{`{modules: /lib/modules/x}`, "", "v.yaml:5: nodes.a.vm.modules: modules go with a kernel"},
		{`{disk: x}`, "", "v.yaml:5"},
		{`{}`, "    services: [{kind: primary}]\n", "nodes.a.services[0].kind: a VM node runs only the agent and sshd services, not postgres"},
	} {
		src := "name: v\nswitches: {ic: {mtu: 9000}}\nnodes:\n  a:\n    vm: " + tc.vm +
			"\n    links: [{switch: ic, address: 198.18.10.1/24}]\n" + tc.extra
		_, err := topology.Parse("v.yaml", []byte(src))
		if err == nil || !errors.Is(err, topology.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("vm: %s %s: %v, want one line with %q", tc.vm, tc.extra, err, tc.want)
		}
	}
	src := "name: v\nswitches: {ic: {mtu: 9000}}\nnodes:\n  a:\n    links: [{switch: ic, address: 198.18.10.1/24}]\n    services: [{kind: sshd}]\n"
	if _, err := topology.Parse("v.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "v.yaml:6: nodes.a.services[0].kind: the sshd service runs in VM nodes (vm:) only") {
		t.Errorf("sshd in a namespace node: %v", err)
	}
	src = "name: v\nswitches: {ic: {mtu: 9000}}\nnodes:\n  a:\n    vm: {}\n    links: [{switch: ic, address: 198.18.10.1/24, rate: 100mbit}]\n"
	if _, err := topology.Parse("v.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "v.yaml:6: nodes.a.links[0].rate: a VM node's link cannot be shaped") {
		t.Errorf("shaped VM link: %v", err)
	}
}
