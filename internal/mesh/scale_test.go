package mesh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/pmtu"
)

var testToken = []byte("mesh-test-token-0123456789")

// startAgents serves n agents on 127.0.0.first, 127.0.0.first+1, ... (each
// a distinct loopback address) until the test ends.
func startAgents(t *testing.T, first, n int) []Node {
	t.Helper()
	var nodes []Node
	for i := first; i < first+n; i++ {
		addr := agenttest.StartOn(t, fmt.Sprintf("127.0.0.%d:0", i), agent.Config{Token: testToken})
		nodes = append(nodes, Node{Name: fmt.Sprintf("up%d", i), Agent: addr})
	}
	return nodes
}

// notAgent listens on addr and closes every connection at once, counting
// them: a node whose "agent" is something else, reached by anyone.
func notAgent(t *testing.T, addr string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), &n
}

// countingDial counts this host's dials per address.
type countingDial struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[addr]++
	c.mu.Unlock()
	d := net.Dialer{Timeout: agent.HandshakeTimeout}
	return d.DialContext(ctx, network, addr)
}

// Dead nodes cost one dial each: an agent that refuses connections and one
// that is not an agent are contacted once, listed once, and none of their
// paths is tried, by this host or by any agent.
func TestRunUnreachableOncePerNode(t *testing.T) {
	nodes := startAgents(t, 1, 4)
	var refused []string
	for i := 1; i <= 3; i++ {
		// Nothing listens on port 1 of these loopback addresses.
		a := fmt.Sprintf("127.0.2.%d:1", i)
		refused = append(refused, a)
		nodes = append(nodes, Node{Name: fmt.Sprintf("refused%d", i), Agent: a})
	}
	bogus, accepted := notAgent(t, "127.0.3.1:0")
	nodes = append(nodes, Node{Name: "bogus", Agent: bogus})

	var cd countingDial
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last Progress
	res, err := Run(ctx, nodes, Options{Token: testToken, Dial: cd.dial, Probe: agent.ProbeOptions{Max: 9000, Expect: 9000},
		Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range append(refused, bogus) {
		if cd.n[a] != 1 {
			t.Errorf("%s dialled %d times, want once", a, cd.n[a])
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the non-agent was connected to %d times (by us and the agents), want once", n)
	}
	if len(res.Unreachable) != 4 {
		t.Fatalf("unreachable: %+v", res.Unreachable)
	}
	for _, u := range res.Unreachable {
		want := "connection refused"
		if u.Node == "bogus" {
			want = "connection closed"
		}
		if !strings.HasPrefix(u.Cause, want) || u.During {
			t.Errorf("%s: cause %q (error %q), want %q", u.Node, u.Cause, u.Error, want)
		}
	}
	if g := res.UnreachableGroups(); len(g) != 2 || len(g[0].Nodes) != 3 {
		t.Errorf("groups: %+v", g)
	}
	// 8 nodes: 56 paths; the 4 live ones measure 12.
	tried, measured, dead, stopped := res.Counts()
	if len(res.Paths) != 56 || tried != 12 || measured != 12 || dead != 44 || stopped != 0 {
		t.Errorf("%d paths: %d tried, %d measured, %d not tried, %d stopped", len(res.Paths), tried, measured, dead, stopped)
	}
	for _, p := range res.Paths {
		dead := strings.HasPrefix(p.From, "refused") || strings.HasPrefix(p.To, "refused") || p.From == "bogus" || p.To == "bogus"
		switch {
		case dead && (p.Skipped != SkipUnreachable || !strings.Contains(p.Error, "unreachable") || *p.MeetsExpect):
			t.Errorf("%s -> %s: %+v", p.From, p.To, p)
		case !dead && (p.Problem() || p.Verdict != pmtu.OK || p.PathMTU != 9000):
			t.Errorf("%s -> %s: %+v", p.From, p.To, p)
		}
	}
	if last.Contacted != 8 || last.Unreachable != 4 || last.PairsDone != 6 || last.Pairs != 6 {
		t.Errorf("last progress %+v", last)
	}
	if got := res.Cell(1, "up1", "refused1"); got != "down!" {
		t.Errorf("cell %q", got)
	}
}

// A run cut short returns at once with what it measured, the cause, and
// every other path marked as not measured.
func TestRunStopped(t *testing.T) {
	nodes := startAgents(t, 11, 6)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("--timeout 9s reached")
	// One pair per node: 3 pairs in flight when the first ends, so at least
	// the other 12 pairs (24 paths) never start.
	res, err := Run(ctx, nodes, Options{Token: testToken, Probe: agent.ProbeOptions{Max: 9000}, PerNode: 1,
		Progress: func(p Progress) {
			if p.PairsDone == 1 {
				cancel(stop)
			}
		}})
	if !errors.Is(err, stop) || res == nil || res.Stopped != stop.Error() {
		t.Fatalf("err %v, result %+v", err, res)
	}
	tried, measured, dead, stopped := res.Counts()
	if len(res.Paths) != 30 || measured < 2 || stopped < 24 || dead != 0 || tried+stopped != 30 {
		t.Fatalf("%d paths: %d tried, %d measured, %d stopped", len(res.Paths), tried, measured, stopped)
	}
	for _, p := range res.Paths {
		if p.Skipped == SkipStopped && (p.Error != "not measured: "+stop.Error() || res.Cell(1, p.From, p.To) != "n/m") {
			t.Errorf("%s -> %s: %+v", p.From, p.To, p)
		}
	}
	if len(res.Unreachable) != 0 {
		t.Errorf("a stopped run judged nodes unreachable: %+v", res.Unreachable)
	}
}

// Sorting and the matrix index are O(P log P) and O(P): a 200-node result
// (39,800 paths, in reverse order) sorts and fills its whole matrix in a
// fraction of a second, where the insertion sort and the scanning Cell
// they replaced took about 30 s of CPU.
func TestLargeResultLinear(t *testing.T) {
	const n = 200
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("n%d", i)}
	}
	res := &Result{Nodes: nodes, Networks: 1, Paths: make([]Path, 0, n*(n-1))}
	for i := n - 1; i >= 0; i-- {
		for j := n - 1; j >= 0; j-- {
			if i != j {
				res.Paths = append(res.Paths, Path{From: nodes[i].Name, To: nodes[j].Name, Network: 1, Result: pmtu.Result{Verdict: pmtu.OK, PathMTU: 9000}})
			}
		}
	}
	start := time.Now()
	sortPaths(res.Paths, nodes)
	cells := 0
	for _, a := range nodes {
		for _, b := range nodes {
			if res.Cell(1, a.Name, b.Name) == "9000" {
				cells++
			}
		}
	}
	took := time.Since(start)
	if cells != n*(n-1) || res.Paths[0].From != "n0" || res.Paths[0].To != "n1" || res.Paths[len(res.Paths)-1].From != "n199" {
		t.Fatalf("%d cells; first %s->%s", cells, res.Paths[0].From, res.Paths[0].To)
	}
	if took > 3*time.Second {
		t.Errorf("sort and matrix of %d paths took %s", len(res.Paths), took)
	}
	t.Logf("sort and matrix of %d paths: %s", len(res.Paths), took)
}

// lateCtx is a context whose deadline has passed but whose Done channel
// closes only later, as a real deadline context's does for a moment: a
// dial that honours the deadline fails with an i/o timeout before ctx.Err()
// turns non-nil.
type lateCtx struct {
	context.Context
	deadline time.Time
}

func (c lateCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// A dial cut by the run's deadline (an i/o timeout a moment before the
// context reports it) is the run stopping, not a dead agent: no node is
// judged unreachable and every path is "not measured".
func TestRunDeadlineBeforeDone(t *testing.T) {
	nodes := startAgents(t, 21, 3)
	stop := errors.New("--timeout 2s reached")
	inner, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, stop)
	defer cancel()
	ctx := lateCtx{Context: inner, deadline: time.Now().Add(-time.Millisecond)}
	timeout := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: context.DeadlineExceeded}
	}
	res, err := Run(ctx, nodes, Options{Token: testToken, Dial: timeout, Probe: agent.ProbeOptions{Max: 9000}})
	if !errors.Is(err, stop) || res == nil || res.Stopped != stop.Error() {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if len(res.Unreachable) != 0 {
		t.Errorf("a deadline judged nodes unreachable: %+v", res.Unreachable)
	}
	if _, _, dead, stopped := res.Counts(); dead != 0 || stopped != 6 {
		t.Errorf("%d unreachable, %d stopped of 6 paths", dead, stopped)
	}
}

// openConns counts this host's open connections per address, and the most
// open at once.
type openConns struct {
	mu               sync.Mutex
	open, top, dials map[string]int
}

type countedConn struct {
	net.Conn
	o    *openConns
	addr string
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.o.mu.Lock()
		c.o.open[c.addr]--
		c.o.mu.Unlock()
	})
	return c.Conn.Close()
}

func (o *openConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: agent.HandshakeTimeout}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.open[addr]++
	o.dials[addr]++
	o.top[addr] = max(o.top[addr], o.open[addr])
	o.mu.Unlock()
	return &countedConn{Conn: c, o: o, addr: addr}, nil
}

// This host never holds more control sessions to one agent than the
// budget (each is one pair the agent takes part in as the prober) and the
// idle ones it keeps for the next pairs, it reuses them (fewer dials than
// pairs), and every path is measured once.
func TestRunPerNodeBudget(t *testing.T) {
	nodes := startAgents(t, 31, 9)
	o := &openConns{open: map[string]int{}, top: map[string]int{}, dials: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, nodes, Options{Token: testToken, Dial: o.dial, PerNode: 2, Probe: agent.ProbeOptions{Max: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	if tried, measured, _, _ := res.Counts(); len(res.Paths) != 72 || tried != 72 || measured != 72 || res.PerNode != 2 {
		t.Fatalf("%d paths, %d tried, %d measured, per node %d", len(res.Paths), tried, measured, res.PerNode)
	}
	seen := map[[2]string]bool{}
	for _, p := range res.Paths {
		k := [2]string{p.From, p.To}
		if seen[k] {
			t.Errorf("%s -> %s twice", p.From, p.To)
		}
		seen[k] = true
	}
	dials := 0
	for _, n := range nodes {
		if o.top[n.Agent] > 2+poolIdle {
			t.Errorf("%s: %d control sessions from here at once, budget 2 and %d idle", n.Name, o.top[n.Agent], poolIdle)
		}
		dials += o.dials[n.Agent]
		if o.open[n.Agent] != 0 {
			t.Errorf("%s: %d control sessions left open after the run", n.Name, o.open[n.Agent])
		}
	}
	// 36 pairs and 9 contacts; without reuse 45 dials.
	if dials >= 36 {
		t.Errorf("%d dials for 36 pairs and 9 contacts: sessions not reused", dials)
	}
	t.Logf("%d dials for 36 pairs", dials)
}
