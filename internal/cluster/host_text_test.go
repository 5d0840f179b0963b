package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/rules"
)

// TestTextHostFindingsPerNode: cluster runs `check --json` on each node
// and keeps the document (node.check); the host rules' findings come
// through it like any other and are listed under their node: the guest
// whose halt polling is off shows CPU-IDLE, the one at 200000 does not.
func TestTextHostFindingsPerNode(t *testing.T) {
	res := &Result{Parallel: 8, MeshSkipped: "test"}
	for _, n := range []struct{ name, tree string }{{"racvm1", "kvm-guest-haltpoll-0"}, {"racvm2", "kvm-guest-haltpoll-200000"}} {
		src, err := inventory.Open("../../testdata/nodes/" + n.tree)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := inventory.Gather(context.Background(), src, inventory.Options{})
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		doc, err := json.Marshal(rules.Check(inv, rules.Config{Interconnect: []string{"eth1"}}))
		if err != nil {
			t.Fatal(err)
		}
		var r rules.Result // as node.check reads it back from the node
		if err := json.Unmarshal(doc, &r); err != nil {
			t.Fatal(err)
		}
		res.Nodes = append(res.Nodes, NodeResult{Name: n.name, Status: StatusOK, Check: &r})
	}
	var b bytes.Buffer
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var vm1, vm2 []string
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 2 && f[0] == "racvm1" && f[2] == "CPU-IDLE":
			vm1 = append(vm1, l)
		case len(f) > 2 && f[0] == "racvm2" && strings.HasPrefix(f[2], "CPU-"):
			vm2 = append(vm2, l)
		}
	}
	if len(vm1) != 1 || !strings.Contains(vm1[0], "warning") || !strings.Contains(vm1[0], "guest_halt_poll_ns 0") {
		t.Errorf("racvm1's CPU-IDLE warning is not listed:\n%s", out)
	}
	if len(vm2) != 0 {
		t.Errorf("racvm2 (polling) has CPU findings:\n%s", out)
	}
}
