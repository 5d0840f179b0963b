package gc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A node whose agent named no MTU has it absent (JSON) and "n/a" (text),
// not 0, and no fragments per block shipped: the packets of its other
// datagrams are counted at the MTU, so the blocks' share is unknown.
func TestBuildMTUUnknown(t *testing.T) {
	runs := make([]*NodeRun, 2)
	for i := range runs {
		runs[i] = &NodeRun{Index: i, MTU: 9000, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
			Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2), BlocksServed: 1000, OtherPackets: 1000}
		runs[i].Counters.UDPOutDatagrams = 2000
	}
	runs[0].From[1] = FromStats{Received: 1000}
	runs[1].From[0] = FromStats{Received: 1000}
	runs[0].Routed[1][0], runs[1].Routed[0][1] = 1000, 1000
	names := []Named{{Name: "a"}, {Name: "b"}}
	r := Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil)
	if r.Nodes[1].FragmentsPerBlock != 1 || r.Total.FragmentsPerBlock != 1 {
		t.Fatalf("both MTUs known: fragments per block %g, total %g, want 1", r.Nodes[1].FragmentsPerBlock, r.Total.FragmentsPerBlock)
	}
	runs[1].MTU = 0
	r = Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil)
	if r.Nodes[0].FragmentsPerBlock != 1 || r.Nodes[1].FragmentsPerBlock != 0 || r.Total.FragmentsPerBlock != 0 {
		t.Errorf("node b without an MTU: fragments per block a %g, b %g, total %g; want 1, none, none",
			r.Nodes[0].FragmentsPerBlock, r.Nodes[1].FragmentsPerBlock, r.Total.FragmentsPerBlock)
	}
	js, err := json.Marshal(r.Nodes[1])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"mtu"`) {
		t.Errorf("an unknown MTU is in the JSON: %s", js)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) == 11 && f[0] == "b" && f[1] != "n/a" { // the nodes table
			t.Errorf("node b's MTU in the text is %q, want n/a:\n%s", f[1], l)
		}
	}
}
