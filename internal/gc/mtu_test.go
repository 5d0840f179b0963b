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

// Nodes whose agents share one network namespace (one host's loopback)
// each read the namespace's counters, which hold all their packets: the
// figures are the namespace's, counted once (three agents on 127.0.0.x
// read 5.5 to 6.7 fragments per unfragmented 8 KiB block).
func TestBuildSharedNetns(t *testing.T) {
	runs := make([]*NodeRun, 2)
	for i := range runs {
		runs[i] = &NodeRun{Index: i, MTU: 65536, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
			Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2), BlocksServed: 1000, OtherPackets: 1000, Host: "boot", Netns: "boot net:[1]"}
		runs[i].Counters.UDPOutDatagrams = 4000 // both nodes' blocks and requests
	}
	runs[0].From[1] = FromStats{Received: 1000}
	runs[1].From[0] = FromStats{Received: 1000}
	runs[0].Routed[1][0], runs[1].Routed[0][1] = 1000, 1000
	names := []Named{{Name: "a"}, {Name: "b"}}
	r := Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil)
	for _, n := range r.Nodes {
		if n.SharedNetns != 2 || n.FragmentsPerBlock != 1 || n.PacketsPerBlock != 2 {
			t.Errorf("node %s: shared by %d, %.2f fragments, %.2f packets per block; want 2, 1, 2", n.Name, n.SharedNetns, n.FragmentsPerBlock, n.PacketsPerBlock)
		}
	}
	if r.Total.FragmentsPerBlock != 1 || r.Total.PacketsPerBlock != 2 {
		t.Errorf("total: %.2f fragments, %.2f packets per block; want 1, 2", r.Total.FragmentsPerBlock, r.Total.PacketsPerBlock)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "+ 2 nodes share one network namespace") {
		t.Errorf("text does not say the nodes share a namespace:\n%s", b.String())
	}
	// In namespaces of their own (a lab), each node's counters are its own.
	runs[1].Netns = "boot net:[2]"
	for _, nr := range runs {
		nr.Counters.UDPOutDatagrams = 2000
	}
	r = Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil)
	if n := r.Nodes[0]; n.SharedNetns != 0 || n.FragmentsPerBlock != 1 || n.PacketsPerBlock != 2 {
		t.Errorf("own namespaces: shared by %d, %.2f fragments, %.2f packets per block", n.SharedNetns, n.FragmentsPerBlock, n.PacketsPerBlock)
	}
}

// A namespace that sent clearly more UDP datagrams than the run's nodes
// did (other programs, other tests on the same loopback) holds other
// traffic: its nodes' packet figures and the total's are n/a, and the
// count is said. Within the slack (hellos), the figures stand.
func TestBuildForeignUDP(t *testing.T) {
	mk := func(extra int64, netns [2]string) *Report {
		runs := make([]*NodeRun, 2)
		for i := range runs {
			runs[i] = &NodeRun{Index: i, MTU: 9000, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
				Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2), BlocksServed: 1000, OtherPackets: 1000, DatagramsOut: 2000,
				Host: "boot", Netns: netns[i]}
			runs[i].Counters.UDPOutDatagrams = 2000 + extra
		}
		if netns[0] == netns[1] { // one namespace: each delta holds both nodes'
			for _, nr := range runs {
				nr.Counters.UDPOutDatagrams = 4000 + extra
			}
		}
		runs[0].From[1] = FromStats{Received: 1000}
		runs[1].From[0] = FromStats{Received: 1000}
		runs[0].Routed[1][0], runs[1].Routed[0][1] = 1000, 1000
		return Build(Spec{Timeout: time.Second}, time.Now(), []Named{{Name: "a"}, {Name: "b"}}, runs, nil)
	}
	for _, ns := range [][2]string{{"boot net:[1]", "boot net:[2]"}, {"boot net:[1]", "boot net:[1]"}} {
		if r := mk(10, ns); r.Nodes[0].ForeignUDP != 0 || r.Nodes[0].FragmentsPerBlock < 1 || r.Nodes[0].FragmentsPerBlock > 1.01 || r.Total.FragmentsPerBlock == 0 {
			t.Errorf("%v, 10 datagrams beyond the run's: foreign %d, fragments %.2f, total %.2f", ns, r.Nodes[0].ForeignUDP, r.Nodes[0].FragmentsPerBlock, r.Total.FragmentsPerBlock)
		}
		r := mk(30000, ns)
		if r.Nodes[0].ForeignUDP != 30000 || r.Nodes[0].FragmentsPerBlock != 0 || r.Nodes[0].PacketsPerBlock != 0 || r.Total.FragmentsPerBlock != 0 {
			t.Errorf("%v, 30000 foreign datagrams: foreign %d, fragments %.2f, packets %.2f, total %.2f", ns, r.Nodes[0].ForeignUDP, r.Nodes[0].FragmentsPerBlock, r.Nodes[0].PacketsPerBlock, r.Total.FragmentsPerBlock)
		}
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "a: packets n/a: 30000 UDP datagrams not of this run") {
			t.Errorf("%v: text does not say so:\n%s", ns, b.String())
		}
	}
}
