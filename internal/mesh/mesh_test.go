package mesh

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/pmtu"
)

func TestParseNodes(t *testing.T) {
	nodes, err := ParseNodes(strings.NewReader(`
# name  agent            interconnect addresses
node1   198.18.0.1       198.18.10.1 fd00:10::1
node2   198.18.0.2:7000  198.18.10.2 fd00:10::2   # comment
node3   [fd00::3]
`), "nodes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[0].Agent != "198.18.0.1:7471" || nodes[1].Agent != "198.18.0.2:7000" ||
		len(nodes[1].Addrs) != 2 || nodes[2].Addrs[0] != netip.MustParseAddr("fd00::3") {
		t.Fatalf("%+v", nodes)
	}
	for _, bad := range []string{"node1\n", "n1 10.0.0.1 notanip\n", "n1 10.0.0.1\nn1 10.0.0.2\n", "n1 10.0.0.1\n", "n1 host.example\nn2 10.0.0.2\n"} {
		if _, err := ParseNodes(strings.NewReader(bad), "f"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A file of another kind: the line is quoted by its start, and a line
	// past the scanner's bound is named as such ("bufio.Scanner: token
	// too long" said neither where nor what).
	for in, want := range map[string]string{
		strings.Repeat("x", 5000) + "\n":             `f:1: want NAME AGENT[:PORT] [ADDR ...], got "` + strings.Repeat("x", 60) + `"... (5000 bytes)`,
		"n1 10.0.0.1\n" + strings.Repeat("x", 70000): "f:2: a line longer than 65536 bytes: not a nodes file",
	} {
		if _, err := ParseNodes(strings.NewReader(in), "f"); err == nil || err.Error() != want {
			t.Errorf("%.20q...: %v, want %s", in, err, want)
		}
	}
	n, err := ParseNode("db1=198.18.0.1:7000@198.18.10.1,fd00:10::1")
	if err != nil || n.Name != "db1" || n.Agent != "198.18.0.1:7000" || len(n.Addrs) != 2 {
		t.Fatalf("ParseNode: %+v %v", n, err)
	}
}

// Three agents on loopback addresses: every path is tested both ways.
func TestRunLoopback(t *testing.T) {
	tok := []byte("mesh-test-token-0123456789")
	var nodes []Node
	for i := 1; i <= 3; i++ {
		addr := agenttest.StartOn(t, fmt.Sprintf("127.0.0.%d:0", i), agent.Config{Token: tok})
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i), Agent: addr})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, nodes, Options{Token: tok, Probe: agent.ProbeOptions{Max: 9000, Expect: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Paths) != 6 || res.PerNode != DefaultPerNode || res.Slowest == nil || res.Slowest.Pairs != 2 || res.Slowest.Spent <= 0 {
		t.Fatalf("%d paths, per node %d, slowest %+v: %+v", len(res.Paths), res.PerNode, res.Slowest, res.Paths)
	}
	for _, p := range res.Paths {
		if p.Problem() || p.Verdict != pmtu.OK || p.PathMTU != 9000 || p.FromAddr != p.From2Addr(nodes) {
			t.Errorf("path %s -> %s: %+v", p.From, p.To, p)
		}
	}
}

// From2Addr finds the path's source node address, to check that probes
// were sent from the node's own address.
func (p Path) From2Addr(nodes []Node) string {
	for _, n := range nodes {
		if n.Name == p.From {
			return n.Addrs[p.Network-1].String()
		}
	}
	return ""
}

func TestResultCell(t *testing.T) {
	no := false
	r := &Result{Paths: []Path{
		{Network: 1, From: "a", To: "b", Result: pmtu.Result{PathMTU: 9000, Verdict: pmtu.OK}},
		{Network: 1, From: "b", To: "a", Result: pmtu.Result{PathMTU: 1500, Verdict: pmtu.Blackhole}},
		{Network: 2, From: "a", To: "b", Result: pmtu.Result{PathMTU: 9000, Verdict: pmtu.OK}, MeetsExpect: &no},
		{Network: 2, From: "b", To: "a", Error: "refused", Result: pmtu.Result{Verdict: pmtu.OK}},
	}}
	cases := []struct {
		net      int
		from, to string
		want     string
	}{{1, "a", "a", "-"}, {1, "a", "b", "9000"}, {1, "b", "a", "1500!"}, {2, "a", "b", "9000!"}, {2, "b", "a", "error!"}, {3, "a", "b", " "}}
	for _, c := range cases {
		if got := r.Cell(c.net, c.from, c.to); got != c.want {
			t.Errorf("Cell(%d, %s, %s) = %q, want %q", c.net, c.from, c.to, got, c.want)
		}
	}
}
