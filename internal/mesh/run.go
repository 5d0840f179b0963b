package mesh

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/agent"
)

// Options tune Run.
type Options struct {
	Token    []byte
	Probe    agent.ProbeOptions
	Software string
	// Dial, when set, opens this host's TCP connections to the agents (in
	// a network namespace, or counted by a test). Nil: the agent package's
	// dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// PerNode is how many working pairs a node takes part in at once (0:
	// DefaultPerNode); pairs that mostly wait out probe timeouts count
	// for the share of their time they work, and a node takes part in at
	// most MaxPerNode pairs at once. Each pair holds a session on both
	// agents.
	PerNode int
	// Progress, when set, is told how far the run is after each agent
	// contacted and each pair finished. Calls are serialised; keep it cheap.
	Progress func(Progress)
}

// Progress is a snapshot of a run, for a progress line.
type Progress struct {
	Contacted, Nodes int // agents contacted so far (reachable or not), of all
	Unreachable      int // nodes whose agent could not be reached so far
	PairsDone, Pairs int // pairs of reachable nodes finished, of all
	InFlight         int // pairs under way
}

// contactParallel bounds the agents contacted at once: each contact that
// gets no answer holds a slot for up to agent.HandshakeTimeout.
const contactParallel = 128

// Run tests every path. It returns a Result holding every path of the mesh
// (failures carry Error, paths not tried carry Skipped), and an error only
// when ctx ended first: then Result.Stopped says so and the paths it cut
// are marked SkipStopped. The error is context.Cause(ctx).
func Run(ctx context.Context, nodes []Node, opt Options) (*Result, error) {
	if err := Check(nodes); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Schema: "interlink.mesh/v1", Nodes: nodes, Expect: opt.Probe.Expect}
	for _, n := range nodes {
		res.Networks = max(res.Networks, len(n.Addrs))
	}
	r := &run{ctx: ctx, nodes: nodes, opt: opt, res: res, down: make([]bool, len(nodes))}
	r.prog.Nodes = len(nodes)
	r.contact()

	// Paths with an unreachable end are not tried; the others are
	// scheduled in rounds of the reachable nodes only.
	var up []int
	for i := range nodes {
		if r.down[i] {
			for j := range nodes {
				if j != i && (j > i || !r.down[j]) {
					r.skip(i, j, SkipUnreachable, nil)
				}
			}
			continue
		}
		up = append(up, i)
	}
	perNode := opt.PerNode
	if perNode <= 0 {
		perNode = DefaultPerNode
	}
	res.PerNode, res.MaxPerNode = perNode, max(perNode, MaxPerNode)
	r.prog.Pairs = len(up) * (len(up) - 1) / 2
	r.schedule(up, newSched(len(up), perNode, res.MaxPerNode))
	r.pool.close()
	order := make(map[string]int, len(nodes))
	for i, n := range nodes {
		order[n.Name] = i
	}
	slices.SortFunc(res.Unreachable, func(a, b Unreachable) int { return order[a.Node] - order[b.Node] })
	sortPaths(res.Paths, nodes)
	res.Elapsed = time.Since(start)
	if r.stopped() {
		err := context.Cause(ctx)
		res.Stopped = err.Error()
		return res, err
	}
	return res, nil
}

// schedule runs every pair of the reachable nodes up (indexes into
// r.nodes) in the order s decides, each on a goroutine of its own, and
// returns when all have finished or been skipped. A node whose agent stops
// answering during the run has its pairs not yet started skipped at once;
// when the run stops, every pair not yet started is skipped.
func (r *run) schedule(up []int, s *sched) {
	type finished struct {
		p            [2]int
		took, waited time.Duration
	}
	fin := make(chan finished)
	launch := func(ps [][2]int) {
		for _, p := range ps {
			go func() {
				t0 := time.Now()
				waited := r.pair(up[p[0]], up[p[1]])
				fin <- finished{p, time.Since(t0), waited}
			}()
		}
		r.mu.Lock()
		r.prog.InFlight = s.inFlight()
		r.mu.Unlock()
	}
	dropped := make([]bool, len(up))
	launch(s.start())
	for s.inFlight() > 0 {
		f := <-fin
		s.finish(f.p, f.took, f.waited)
		for _, i := range f.p {
			r.mu.Lock()
			gone := r.down[up[i]] && !dropped[i]
			r.mu.Unlock()
			if gone {
				dropped[i] = true
				for _, p := range s.drop(i) {
					r.skip(up[p[0]], up[p[1]], SkipUnreachable, nil)
					r.add(nil, true)
				}
			}
		}
		if r.stopped() {
			for _, p := range s.rest() {
				r.skip(up[p[0]], up[p[1]], SkipStopped, nil)
			}
			continue
		}
		launch(s.fill([]int{f.p[0], f.p[1]}))
	}
	best := -1
	for i := range up {
		if s.done[i] > 0 && (best < 0 || s.spent[i] > s.spent[best]) {
			best = i
		}
	}
	if best >= 0 {
		r.res.Slowest = &NodeTime{Node: r.nodes[up[best]].Name, Pairs: s.done[best], Spent: s.spent[best], Waited: s.waited[best]}
	}
}

// run is the state of one Run; mu guards res, down and prog.
type run struct {
	ctx   context.Context
	nodes []Node
	opt   Options
	res   *Result
	mu    sync.Mutex
	down  []bool // by node index: its agent could not be reached
	prog  Progress
	pool  pool // idle control sessions for the next pairs
}

// stopped reports whether the run's context has ended. A context whose
// deadline has passed counts as ended even before its Done channel fires:
// a dial or read that uses that deadline fails with an i/o timeout a moment
// before ctx.Err() turns non-nil, and that failure is the run's end, not an
// agent that stopped answering. stopped then waits for Done (it is due), so
// context.Cause is set when it returns true.
func (r *run) stopped() bool {
	if r.ctx.Err() != nil {
		return true
	}
	if d, ok := r.ctx.Deadline(); ok && !time.Now().Before(d) {
		<-r.ctx.Done()
		return true
	}
	return false
}

func (r *run) dial(n Node) (*agent.Client, error) {
	return agent.Dial(r.ctx, n.Agent, r.opt.Token, agent.DialOptions{Software: r.opt.Software, Dial: r.opt.Dial})
}

// contact dials every agent once, concurrently, and marks those that
// cannot be reached. A dial cut by the end of ctx marks nothing: that node
// was not judged, and its paths are recorded as stopped.
func (r *run) contact() {
	sem := make(chan struct{}, contactParallel)
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			at := time.Now()
			c, err := r.dial(n)
			if err == nil {
				r.pool.put(i, c, at) // the first pair of i needs no dial
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.prog.Contacted++
			// An agent that heard this host's handshake too late (twice)
			// is alive, and one whose host took the connection but did not
			// answer the handshake in time may be only descheduled: its
			// pairs dial it again (each once more on a timeout) before it
			// is called dead.
			if err != nil && !r.stopped() && !late(err) && !agent.Stalled(err) {
				r.markDownLocked(i, err, false)
			}
			r.progressLocked()
		}()
	}
	wg.Wait()
}

func (r *run) markDownLocked(i int, err error, during bool) {
	if r.down[i] {
		return
	}
	r.down[i] = true
	r.prog.Unreachable++
	r.res.Unreachable = append(r.res.Unreachable, Unreachable{
		Node: r.nodes[i].Name, Agent: r.nodes[i].Agent, Cause: Cause(err), Error: err.Error(), During: during,
	})
}

func (r *run) progressLocked() {
	if r.opt.Progress != nil {
		r.opt.Progress(r.prog)
	}
}

// skip records the paths between nodes a and b (both directions, every
// network both have) as not tried for reason; err, when set, is why.
func (r *run) skip(a, b int, reason string, err error) {
	var msg string
	switch reason {
	case SkipUnreachable:
		var dead []string
		r.mu.Lock()
		for _, i := range []int{a, b} {
			if r.down[i] {
				dead = append(dead, r.nodes[i].Name)
			}
		}
		r.mu.Unlock()
		msg = "not tried: agent of " + strings.Join(dead, " and ") + " unreachable"
	default:
		msg = "not measured: the run stopped first"
		if c := context.Cause(r.ctx); c != nil {
			msg = "not measured: " + c.Error()
		}
	}
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	var out []Path
	for _, p := range r.paths(a, b) {
		p.Error, p.Skipped = msg, reason
		out = append(out, r.expect(p))
	}
	r.add(out, false)
}

// paths returns the empty paths between nodes a and b: a to b and b to a
// on every network both have.
func (r *run) paths(a, b int) []Path {
	A, B := r.nodes[a], r.nodes[b]
	var out []Path
	for i := 0; i < min(len(A.Addrs), len(B.Addrs)); i++ {
		out = append(out,
			Path{From: A.Name, To: B.Name, Network: i + 1, FromAddr: A.Addrs[i].String(), ToAddr: B.Addrs[i].String()},
			Path{From: B.Name, To: A.Name, Network: i + 1, FromAddr: B.Addrs[i].String(), ToAddr: A.Addrs[i].String()})
	}
	return out
}

func (r *run) expect(p Path) Path {
	if r.opt.Probe.Expect > 0 {
		ok := p.Error == "" && p.PathMTU >= r.opt.Probe.Expect
		p.MeetsExpect = &ok
	}
	return p
}

func (r *run) add(ps []Path, pairDone bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Paths = append(r.res.Paths, ps...)
	if pairDone {
		r.prog.PairsDone++
		r.progressLocked()
	}
}

// String is a one-line summary of the progress, for a terminal.
func (p Progress) String() string {
	if p.Pairs == 0 && p.Contacted < p.Nodes {
		return fmt.Sprintf("contacting agents: %d of %d, %d unreachable", p.Contacted, p.Nodes, p.Unreachable)
	}
	return fmt.Sprintf("%d of %d pairs done, %d under way, %d nodes unreachable", p.PairsDone, p.Pairs, p.InFlight, p.Unreachable)
}
