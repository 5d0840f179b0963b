package replica_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDepsLeaveOutLabBuilder: replica makes topologies; it imports the
// lab model (lab/topology), never the builder (lab) nor netlink, so
// writing a replica needs no kernel-side code.
func TestDepsLeaveOutLabBuilder(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/interlink/interlink/internal/lab/topology") {
		t.Fatalf("replica's dependencies do not include lab/topology; go list said:\n%s", out)
	}
	for _, d := range deps {
		if d == "github.com/interlink/interlink/internal/lab" || strings.HasPrefix(d, "github.com/vishvananda/netlink") {
			t.Errorf("replica depends on %s", d)
		}
	}
}
