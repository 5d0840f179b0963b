package gc

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/wire"
)

var testToken = []byte("t23-gc-token-0123456789abcdef")

// agents starts n agents on loopback and returns them as nodes.
func agents(t *testing.T, n int, limits wire.Limits) []mesh.Node {
	t.Helper()
	var nodes []mesh.Node
	for i := 0; i < n; i++ {
		addr := agenttest.Start(t, agent.Config{Token: testToken, Software: "t23 gc test", Limits: limits})
		nd, err := mesh.ParseNode(string(rune('a'+i)) + "=" + addr)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, nd)
	}
	if err := mesh.Check(nodes); err != nil {
		t.Fatal(err)
	}
	return nodes
}

// deadPort returns a loopback address where nothing listens.
func deadPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRunThroughAgents runs the whole protocol through real agents on
// loopback (setup, pair sessions, start, drain, collect), with one named
// node whose agent is not there: it is named, the others are measured.
func TestRunThroughAgents(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	nodes := agents(t, 3, wire.Limits{})
	dead, err := mesh.ParseNode("gone=" + deadPort(t))
	if err != nil {
		t.Fatal(err)
	}
	nodes = append(nodes, dead)
	if err := mesh.Check(nodes); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), nodes, Spec{Duration: 500 * time.Millisecond, Blocks: 1000, PingInterval: 20 * time.Millisecond},
		Options{Token: testToken, Software: "t23"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.WriteText(&out)
	t.Logf("\n%s", out.String())
	if len(r.Unreachable) != 1 || r.Unreachable[0].Node != "gone" || !strings.Contains(out.String(), "UNREACHABLE: gone") {
		t.Errorf("unreachable %+v", r.Unreachable)
	}
	if len(r.Nodes) != 3 || len(r.Pairs) != 6 || len(r.Pings) != 9 {
		t.Fatalf("%d nodes, %d pairs, %d ping rows", len(r.Nodes), len(r.Pairs), len(r.Pings))
	}
	for _, nd := range r.Nodes {
		if nd.Error != "" || nd.Received == 0 || nd.Served == 0 || nd.CPU.UserNs+nd.CPU.SystemNs == 0 || nd.Dropped != 0 {
			t.Errorf("%s: %+v", nd.Name, nd)
		}
	}
	for _, p := range r.Pairs {
		if !p.Balanced || p.Received == 0 {
			t.Errorf("%s <- %s: %+v", p.Requester, p.Server, p)
		}
	}
	if r.Total.TwoWay == nil || r.Total.ThreeWay == nil {
		t.Errorf("2-way %+v, 3-way %+v", r.Total.TwoWay, r.Total.ThreeWay)
	}
}

func TestRunRefusals(t *testing.T) {
	nodes := agents(t, 2, wire.Limits{MaxDuration: 10 * time.Second})
	_, err := Run(context.Background(), nodes, Spec{Duration: time.Second}, Options{Token: []byte("t23-the-wrong-token-0123456789")})
	if !errors.Is(err, ErrAuth) {
		t.Errorf("wrong token: %v", err)
	}
	// Longer than the agents allow per session: both refuse the run.
	_, err = Run(context.Background(), nodes, Spec{Duration: 9 * time.Second}, Options{Token: testToken})
	if err == nil || !strings.Contains(err.Error(), "0 of 2 nodes can take part") || !strings.Contains(err.Error(), "longer than this agent allows") {
		t.Errorf("too long for the agents: %v", err)
	}
}

// Ctrl-C during a run stops every node at once and reports what they
// measured until then.
func TestRunInterrupted(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	nodes := agents(t, 2, wire.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	r, err := Run(ctx, nodes, Spec{Duration: time.Minute, Blocks: 1000}, Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Total.Received == 0 || len(r.Unreachable) != 0 {
		t.Errorf("interrupted after 0.5 s of 1 min: interrupted %v, %d received, unreachable %+v", r.Interrupted, r.Total.Received, r.Unreachable)
	}
	for _, p := range r.Problems {
		if p.Problem == ProblemAccounting {
			t.Errorf("an interrupted run's requests in flight reported as %+v", p)
		}
	}
}
