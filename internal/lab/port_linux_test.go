package lab

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/ebpf"
)

// TestPortSides: what each direction of a switch port drops, from the
// topology: the blackhole port limits both ways, the port of a lossy link
// loses both ways and limits nothing, a plain port gets no classifier.
func TestPortSides(t *testing.T) {
	top, err := Parse("lossy.yaml", []byte(`name: ps
switches: {ic: {mtu: 9000}}
nodes:
  n1: {links: [{switch: ic, loss: 1%}]}
  n2: {links: [{switch: ic, port_mtu: 1500, loss: 0.5%}]}
  n3: {links: [{switch: ic}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][2]ebpf.Port{
		{{LossPercent: 1}, {LossPercent: 1}},
		{{MTU: 1500, LossPercent: 0.5}, {MTU: 1500, LossPercent: 0.5}},
		{{}, {}},
	} {
		l := top.Nodes[i].Links[0]
		from, to := portSides(top, l)
		if from != want[0] || to != want[1] {
			t.Errorf("%s: from the node %+v, to it %+v; want %+v, %+v", top.Nodes[i].Name, from, to, want[0], want[1])
		}
		if portFiltered(top, l) != (i < 2) {
			t.Errorf("%s: portFiltered %v", top.Nodes[i].Name, portFiltered(top, l))
		}
	}
	// A kernel that cannot load the classifier refuses a lossy link too,
	// naming it and the way out.
	noPortClassifier(t)
	top.Nodes[1].Links[0].PortMTU = 9000
	err = checkPortClassifier(top)
	if err == nil || !strings.Contains(err.Error(), "node n1 link eth0 (loss 1%)") || !strings.Contains(err.Error(), "no port_mtu and no loss") {
		t.Errorf("refusal of a lossy link without the classifier: %v", err)
	}
}
