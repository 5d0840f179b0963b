package gc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/parallel"
)

// Options tune Run.
type Options struct {
	Token    []byte
	Software string // announced to the agents
	// Progress, when set, hears what the run is doing ("running 4s of
	// 10s"), for a terminal.
	Progress func(string)
}

// ErrAuth is wrapped when an agent refused the token: the whole cluster is
// configured wrong, and no measurement of the others would mean much.
var ErrAuth = errors.New("authentication failed")

// callTimeout bounds one setup or collect request to an agent.
const callTimeout = 10 * time.Second

// member is a node taking part: its session and its run.
type member struct {
	node mesh.Node
	c    *agent.Client
	open OpenReply
}

// coordinator is one Run's state between its phases. Only Run's own
// goroutine touches it: the phases' parallel calls each write a slot of
// their own, read once they are all done.
type coordinator struct {
	spec  Spec
	opt   Options
	nodes []mesh.Node
	// down are the named nodes that took no part, or whose result was lost.
	down []mesh.Unreachable
}

// Run measures nodes (mesh.Check'ed) with spec: it sets the run up on
// every node's agent, starts it, waits, and collects. Nodes whose agent
// cannot be reached are named in the report and the others measured; a
// refused token is an error wrapping ErrAuth, a result that does not fit
// its run (Validate) an error wrapping ErrResult. When ctx ends early
// (Ctrl-C) the nodes are stopped and what they measured is reported
// (Interrupted).
func Run(ctx context.Context, nodes []mesh.Node, spec Spec, opt Options) (*Report, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%w: %d nodes: at most %d (each pair holds a session on one of its agents)", ErrSpec, len(nodes), MaxNodes)
	}
	c := &coordinator{spec: spec, opt: opt, nodes: nodes}
	c.progress("contacting %d agents", len(nodes))
	ms, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, m := range ms {
			m.c.Close()
		}
	}()
	ms = c.open(ctx, ms)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(ms) < 2 {
		return nil, fmt.Errorf("%d of %d nodes can take part, a run needs 2: %s", len(ms), len(nodes), describe(c.down))
	}
	if err := c.start(ctx, ms); err != nil {
		return nil, err
	}
	start := time.Now()
	interrupted := c.wait(ctx, ms)
	c.progress("collecting")
	named, runs, err := c.collect(ms)
	if err != nil {
		return nil, err
	}
	rep := Build(spec, start, named, runs, c.down)
	if interrupted {
		rep.Interrupted = true
		rep.judge()
	}
	return rep, nil
}

func (c *coordinator) progress(format string, a ...any) {
	if c.opt.Progress != nil {
		c.opt.Progress(fmt.Sprintf(format, a...))
	}
}

// unreachable names node n as taking no part (during: its result lost).
func (c *coordinator) unreachable(n mesh.Node, agentAddr string, err error, during bool) {
	cause := mesh.Cause(err)
	if during && closed(err) {
		cause = "connection closed during the run (the agent stopped?)"
	}
	c.down = append(c.down, mesh.Unreachable{Node: n.Name, Agent: agentAddr, Cause: cause, Error: err.Error(), During: during})
}

// closed reports whether err is a session that ended under the call.
func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// dial opens a session with every agent at once. A refused token ends the
// run (every session closed); an agent that cannot be reached is named.
func (c *coordinator) dial(ctx context.Context) ([]*member, error) {
	clients := make([]*agent.Client, len(c.nodes))
	errs := make([]error, len(c.nodes))
	// Every node at once (the limit is n), here and below: a gc run has a
	// handful of nodes, and each call waits on the network.
	parallel.Run(len(c.nodes), len(c.nodes), func(i int) {
		dctx, cancel := context.WithTimeout(ctx, agent.HandshakeTimeout)
		defer cancel()
		clients[i], errs[i] = agent.Dial(dctx, c.nodes[i].Agent, c.opt.Token, agent.DialOptions{Software: c.opt.Software, Dial: dial})
	})
	var ms []*member
	for i, n := range c.nodes {
		var re *agent.RefusedError
		switch {
		case errors.As(errs[i], &re) && strings.Contains(re.Reason, "authentication failed"):
			for _, cl := range clients {
				if cl != nil {
					cl.Close()
				}
			}
			return nil, fmt.Errorf("node %s: %w (%s)", n.Name, ErrAuth, errs[i])
		case errs[i] != nil:
			c.unreachable(n, n.Agent, errs[i], false)
		default:
			ms = append(ms, &member{node: n, c: clients[i]})
		}
	}
	return ms, nil
}

// open asks each member for its part in the run (a data socket); those
// that cannot take part are closed and named, the others returned.
func (c *coordinator) open(ctx context.Context, ms []*member) []*member {
	errs := make([]error, len(ms))
	parallel.Run(len(ms), len(ms), func(i int) {
		m := ms[i]
		errs[i] = call(ctx, m.c, KindOpen, OpenRequest{Spec: c.spec, Local: m.node.Addrs[0].String()}, &m.open)
		if _, err := netip.ParseAddrPort(m.open.Ping); errs[i] == nil && err != nil {
			errs[i] = fmt.Errorf("its agent named no ping endpoint (%q): is it an older interlink? The agents and this command must be one version", m.open.Ping)
		}
	})
	var kept []*member
	for i, m := range ms {
		if errs[i] != nil {
			m.c.Close()
			c.unreachable(m.node, m.node.Agent, errs[i], false)
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// start connects the members pairwise (each dials its share of the
// others) and starts every node's engines.
func (c *coordinator) start(ctx context.Context, ms []*member) error {
	members := make([]Member, len(ms))
	for i, m := range ms {
		members[i] = Member{Agent: m.c.Addr, Data: m.open.Data, Ping: m.open.Ping, Run: m.open.Run}
	}
	c.progress("connecting %d nodes pairwise", len(ms))
	plan := DialPlan(len(ms))
	if err := each(ctx, ms, func(i int, m *member) error {
		return call(ctx, m.c, KindConnect, ConnectRequest{Run: m.open.Run, Self: i, Members: members, Dial: plan[i]}, nil)
	}); err != nil {
		return err
	}
	return each(ctx, ms, func(i int, m *member) error {
		return call(ctx, m.c, KindStart, RunRef{Run: m.open.Run}, nil)
	})
}

// wait lets the run go its duration and, unless ctx ended first (it then
// reports true), lets every node settle its last requests.
func (c *coordinator) wait(ctx context.Context, ms []*member) (interrupted bool) {
	interrupted = sleep(ctx, c.spec.Duration, func(d time.Duration) {
		c.progress("running: %s of %s", d.Round(time.Second), c.spec.Duration)
	})
	if interrupted {
		return true
	}
	c.progress("settling the last requests")
	// A node that does not settle in time is collected all the same (its
	// result says what was still in flight), so the errors are not kept.
	each(context.Background(), ms, func(i int, m *member) error {
		wctx, cancel := context.WithTimeout(context.Background(), drainWait(c.spec)+callTimeout)
		defer cancel()
		return m.c.Call(wctx, KindDrain, RunRef{Run: m.open.Run, WaitNs: drainWait(c.spec).Nanoseconds()}, nil)
	})
	return false
}

// collected is one member's answer to gc.result: each collecting
// goroutine writes only its own.
type collected struct {
	nr  NodeRun
	err error
}

// collect asks every member for its result at once. A member whose agent
// does not answer is named (During) and its result left nil; a result
// that does not fit the run ends it with an error naming the node.
func (c *coordinator) collect(ms []*member) ([]Named, []*NodeRun, error) {
	got := make([]collected, len(ms))
	parallel.Run(len(ms), len(ms), func(i int) {
		got[i].err = call(context.Background(), ms[i].c, KindResult, RunRef{Run: ms[i].open.Run}, &got[i].nr)
	})
	named := make([]Named, len(ms))
	runs := make([]*NodeRun, len(ms))
	for i, m := range ms {
		named[i] = Named{Name: m.node.Name, Agent: m.c.Addr}
		if got[i].err != nil {
			c.unreachable(m.node, m.c.Addr, got[i].err, true)
			continue
		}
		nr := &got[i].nr
		if err := nr.Validate(i, len(ms), c.spec); err != nil {
			return nil, nil, fmt.Errorf("node %s (agent %s): %w", m.node.Name, m.c.Addr, err)
		}
		nr.Addr = m.open.Data
		runs[i] = nr
	}
	return named, runs, nil
}

func call(ctx context.Context, c *agent.Client, kind string, req, resp any) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return c.Call(cctx, kind, req, resp)
}

// each runs fn for every member at once and returns the errors, each naming
// its node.
func each(ctx context.Context, ms []*member, fn func(i int, m *member) error) error {
	errs := make([]error, len(ms))
	parallel.Run(len(ms), len(ms), func(i int) {
		if err := fn(i, ms[i]); err != nil {
			errs[i] = fmt.Errorf("node %s: %w", ms[i].node.Name, err)
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// sleep waits d, calling tick every second; it reports whether ctx ended
// first.
func sleep(ctx context.Context, d time.Duration, tick func(time.Duration)) bool {
	t0 := time.Now()
	end := time.NewTimer(d)
	defer end.Stop()
	every := time.NewTicker(time.Second)
	defer every.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-end.C:
			return false
		case <-every.C:
			tick(time.Since(t0))
		}
	}
}

func describe(us []mesh.Unreachable) string {
	var parts []string
	for _, u := range us {
		parts = append(parts, fmt.Sprintf("%s (%s)", u.Node, u.Cause))
	}
	if len(parts) == 0 {
		return "none unreachable"
	}
	return strings.Join(parts, ", ")
}
