package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/pmqos"
	"github.com/interlink/interlink/internal/roottest"
)

// TestBenchCPULatencyRefused: an agent started without
// --allow-cpu-latency refuses the hold; the run goes on, and its text and
// JSON say which end held and why the other did not.
func TestBenchCPULatencyRefused(t *testing.T) {
	roottest.Require(t, "it holds "+pmqos.Path)
	addr, tok := benchAgent(t)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "300ms",
		"--self-test=false", "--cpu-latency", "0", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		CPULatency *pmqos.Report `json:"cpu_latency"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.CPULatency == nil || len(r.CPULatency.Ends) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	local, peer := r.CPULatency.Ends[0], r.CPULatency.Ends[1]
	if r.CPULatency.RequestedUS != 0 || !local.Held || local.End != "local" || peer.Held || !strings.Contains(peer.Reason, "--allow-cpu-latency") {
		t.Errorf("cpu_latency: %+v", r.CPULatency)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "300ms",
		"--self-test=false", "--cpu-latency", "0")
	if code != ExitOK || !strings.Contains(out, "local: held") || !strings.Contains(out, "NOT held: this agent does not allow CPU latency holds (start it with --allow-cpu-latency)") {
		t.Errorf("exit %d, text:\n%s%s", code, out, errOut)
	}
}

// TestBenchGCCPULatency: with --mode gc the hold is taken here and asked
// of every node's agent through a session of its own; agents started
// without --allow-cpu-latency refuse, and the run goes on and says so.
func TestBenchGCCPULatency(t *testing.T) {
	roottest.Require(t, "it holds "+pmqos.Path)
	nodes, tok := gcAgents(t, 2)
	args := append([]string{"bench", "--mode", "gc", "--token-file", tok, "--time", "300ms", "--blocks", "1000", "--cpu-latency", "0", "--json"}, nodes...)
	code, out, errOut := runCLI(context.Background(), args...)
	var r struct {
		CPULatency *pmqos.Report `json:"cpu_latency"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.CPULatency == nil || len(r.CPULatency.Ends) != 3 {
		t.Fatalf("exit %d: %v: %s%s", code, err, out, errOut)
	}
	if e := r.CPULatency.Ends[0]; !e.Held || e.End != "local" {
		t.Errorf("local end: %+v", e)
	}
	for _, e := range r.CPULatency.Ends[1:] {
		if e.Held || !strings.HasPrefix(e.End, "peer 127.0.0.1:") || !strings.Contains(e.Reason, "--allow-cpu-latency") {
			t.Errorf("peer end: %+v", e)
		}
	}
}
