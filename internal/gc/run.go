package gc

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/mesh"
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

// Run measures nodes (mesh.Check'ed) with spec: it sets the run up on
// every node's agent, starts it, waits, and collects. Nodes whose agent
// cannot be reached are named in the report and the others measured; a
// refused token is an error wrapping ErrAuth. When ctx ends early (Ctrl-C)
// the nodes are stopped and what they measured is reported (Interrupted).
func Run(ctx context.Context, nodes []mesh.Node, spec Spec, opt Options) (*Report, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%w: %d nodes: at most %d (each pair holds a session on one of its agents)", ErrSpec, len(nodes), MaxNodes)
	}
	progress := func(format string, a ...any) {
		if opt.Progress != nil {
			opt.Progress(fmt.Sprintf(format, a...))
		}
	}
	progress("contacting %d agents", len(nodes))
	var unreachable []mesh.Unreachable
	down := func(n mesh.Node, err error) {
		unreachable = append(unreachable, mesh.Unreachable{Node: n.Name, Agent: n.Agent, Cause: mesh.Cause(err), Error: err.Error()})
	}
	// Dial every agent at once.
	clients := make([]*agent.Client, len(nodes))
	errs := make([]error, len(nodes))
	parallel(len(nodes), func(i int) {
		dctx, cancel := context.WithTimeout(ctx, agent.HandshakeTimeout)
		defer cancel()
		clients[i], errs[i] = agent.Dial(dctx, nodes[i].Agent, opt.Token, agent.DialOptions{Software: opt.Software, Dial: dial})
	})
	var ms []*member
	defer func() {
		for _, m := range ms {
			m.c.Close()
		}
	}()
	for i, n := range nodes {
		var re *agent.RefusedError
		switch {
		case errors.As(errs[i], &re) && strings.Contains(re.Reason, "authentication failed"):
			for _, c := range clients {
				if c != nil {
					c.Close()
				}
			}
			return nil, fmt.Errorf("node %s: %w (%s)", n.Name, ErrAuth, errs[i])
		case errs[i] != nil:
			down(n, errs[i])
		default:
			ms = append(ms, &member{node: n, c: clients[i]})
		}
	}
	// Open a run on each; a node that cannot take part is named.
	parallel(len(ms), func(i int) {
		m := ms[i]
		errs[i] = call(ctx, m.c, KindOpen, OpenRequest{Spec: spec, Local: m.node.Addrs[0].String()}, &m.open)
		if _, err := netip.ParseAddrPort(m.open.Ping); errs[i] == nil && err != nil {
			errs[i] = fmt.Errorf("its agent named no ping endpoint (%q): is it an older interlink? The agents and this command must be one version", m.open.Ping)
		}
	})
	kept := ms[:0]
	for i, m := range ms {
		if errs[i] != nil {
			m.c.Close()
			down(m.node, errs[i])
			continue
		}
		kept = append(kept, m)
	}
	ms = kept
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(ms) < 2 {
		return nil, fmt.Errorf("%d of %d nodes can take part, a run needs 2: %s", len(ms), len(nodes), describe(unreachable))
	}
	n := len(ms)
	members := make([]Member, n)
	for i, m := range ms {
		members[i] = Member{Agent: m.c.Addr, Data: m.open.Data, Ping: m.open.Ping, Run: m.open.Run}
	}
	progress("connecting %d nodes pairwise", n)
	plan := DialPlan(n)
	if err := each(ctx, ms, func(i int, m *member) error {
		return call(ctx, m.c, KindConnect, ConnectRequest{Run: m.open.Run, Self: i, Members: members, Dial: plan[i]}, nil)
	}); err != nil {
		return nil, err
	}
	if err := each(ctx, ms, func(i int, m *member) error {
		return call(ctx, m.c, KindStart, RunRef{Run: m.open.Run}, nil)
	}); err != nil {
		return nil, err
	}
	start := time.Now()
	interrupted := wait(ctx, spec.Duration, func(d time.Duration) {
		progress("running: %s of %s", d.Round(time.Second), spec.Duration)
	})
	if !interrupted {
		progress("settling the last requests")
		each(context.Background(), ms, func(i int, m *member) error {
			wctx, cancel := context.WithTimeout(context.Background(), drainWait(spec)+callTimeout)
			defer cancel()
			return m.c.Call(wctx, KindDrain, RunRef{Run: m.open.Run, WaitNs: drainWait(spec).Nanoseconds()}, nil)
		})
	}
	progress("collecting")
	runs := make([]*NodeRun, n)
	named := make([]Named, n)
	each(context.Background(), ms, func(i int, m *member) error {
		named[i] = Named{Name: m.node.Name, Agent: m.c.Addr}
		var nr NodeRun
		if err := call(context.Background(), m.c, KindResult, RunRef{Run: m.open.Run}, &nr); err != nil {
			unreachable = append(unreachable, mesh.Unreachable{Node: m.node.Name, Agent: m.c.Addr, Cause: mesh.Cause(err), Error: err.Error(), During: true})
			return err
		}
		nr.Addr = m.open.Data
		runs[i] = &nr
		return nil
	})
	rep := Build(spec, start, named, runs, unreachable)
	if interrupted {
		rep.Interrupted = true
		rep.judge()
	}
	return rep, nil
}

func call(ctx context.Context, c *agent.Client, kind string, req, resp any) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return c.Call(cctx, kind, req, resp)
}

func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i)
		}()
	}
	wg.Wait()
}

// each runs fn for every member at once and returns the errors, each naming
// its node.
func each(ctx context.Context, ms []*member, fn func(i int, m *member) error) error {
	errs := make([]error, len(ms))
	parallel(len(ms), func(i int) {
		if err := fn(i, ms[i]); err != nil {
			errs[i] = fmt.Errorf("node %s: %w", ms[i].node.Name, err)
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// wait sleeps d, calling tick every second; it reports whether ctx ended
// first.
func wait(ctx context.Context, d time.Duration, tick func(time.Duration)) bool {
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
