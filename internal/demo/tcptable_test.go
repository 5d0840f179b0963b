package demo

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/traffic"
)

// TestTCPCostNotAvailable: a TCP run that delivered nothing has no CPU
// per GiB (n/a), not 0 ms, the cheapest figure there is; one that did
// shows the sum of both ends.
func TestTCPCostNotAvailable(t *testing.T) {
	flow := func(client, server float64) *traffic.Result {
		return &traffic.Result{Flows: []traffic.Flow{{Summary: traffic.Summary{
			ClientCost: traffic.Cost{CPUNsPerGiB: client}, ServerCost: traffic.Cost{CPUNsPerGiB: server}}}}}
	}
	var b strings.Builder
	renderTCP(&b, &Result{TCP: []Bench{{Label: "MTU 9000", Result: flow(300e6, 200e6)}, {Label: "MTU 1500", Result: flow(0, 0)}}})
	line := ""
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "CPU per GiB") {
			line = l
		}
	}
	if f := strings.Fields(line); len(f) < 3 || f[len(f)-3] != "500" || f[len(f)-2] != "ms" || f[len(f)-1] != "n/a" {
		t.Errorf("CPU per GiB row %q, want 500 ms and n/a", line)
	}
}
