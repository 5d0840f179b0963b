package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/units"
)

func init() {
	agent.Register(KindOpen, serveOpen)
	agent.Register(KindStart, serveStart)
	agent.Register(KindResult, serveResult)
}

// run is the agent's end of one bench run in a session.
type run struct {
	spec Spec
	role Role
	udp  *agent.UDPEndpoint
	tcp  *agent.TCPEndpoint

	// awake is the responder's receive path awake, measured when the run
	// was opened: before the client (perhaps in this namespace) starts
	// counting.
	awake *awake

	cancel context.CancelFunc
	done   chan struct{}
	side   *Side
}

// runs holds the runs of live sessions; a session's runs are dropped when
// it ends.
var runs = struct {
	sync.Mutex
	m    map[*agent.Session]map[uint64]*run
	next uint64
}{m: map[*agent.Session]map[uint64]*run{}}

// maxRuns bounds the runs one session may open (bidir needs two).
const maxRuns = 4

func lookup(s *agent.Session, id uint64) (*run, error) {
	runs.Lock()
	defer runs.Unlock()
	r := runs.m[s][id]
	if r == nil {
		return nil, fmt.Errorf("no bench run %d in this session", id)
	}
	return r, nil
}

func serveOpen(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var req OpenRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bench.open: %w", err)
	}
	spec, err := req.Spec.Normalize()
	if err != nil {
		return nil, err
	}
	// The agent's end runs with the client's --peer-cpu.
	spec.CPU, spec.PeerCPU = spec.PeerCPU, nil
	if spec.CPU != nil {
		if err := agent.CheckCPU(*spec.CPU); err != nil {
			return nil, fmt.Errorf("--peer-cpu: %w", err)
		}
	}
	if spec.Duration+drainGrace > s.Limits.MaxDuration {
		return nil, fmt.Errorf("bench: --time %v is longer than this agent allows per session (%v)", spec.Duration, s.Limits.MaxDuration-drainGrace)
	}
	want := map[Mode][]Role{ModeTCP: {RoleSender, RoleReceiver}, ModeUDP: {RoleSender, RoleReceiver}, ModeBlocks: {RoleResponder}}[spec.Mode]
	ok := false
	for _, r := range want {
		ok = ok || r == req.Role
	}
	if !ok {
		return nil, fmt.Errorf("bench: role %q is not one the agent plays in mode %s", req.Role, spec.Mode)
	}
	r := &run{spec: spec, role: req.Role, done: make(chan struct{})}
	if r.role == RoleResponder {
		a := awakeFor(spec, responderDatagram)
		r.awake = &a
	}
	var port uint16
	if spec.Mode == ModeTCP {
		if r.tcp, err = s.ListenTCP(s.LocalAddr().Addr()); err != nil {
			return nil, err
		}
		port = r.tcp.LocalAddr().Port()
	} else {
		if r.udp, err = s.ListenUDP(s.LocalAddr().Addr()); err != nil {
			return nil, err
		}
		port = r.udp.LocalAddr().Port()
	}
	runs.Lock()
	defer runs.Unlock()
	m := runs.m[s]
	if m == nil {
		m = map[uint64]*run{}
		runs.m[s] = m
		context.AfterFunc(s.Context(), func() {
			runs.Lock()
			delete(runs.m, s)
			runs.Unlock()
		})
	}
	if len(m) >= maxRuns {
		return nil, fmt.Errorf("bench: at most %d runs per session", maxRuns)
	}
	runs.next++
	m[runs.next] = r
	return OpenReply{Run: runs.next, Port: port}, nil
}

// serveStart waits for the client's data streams (tcp) or its hello (udp),
// then starts the agent's end and returns at once.
func serveStart(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var ref RunRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("bench.start: %w", err)
	}
	r, err := lookup(s, ref.Run)
	if err != nil {
		return nil, err
	}
	if r.cancel != nil {
		return nil, errors.New("bench: run already started")
	}
	setup, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	g := guard{seal: s.Sealer(), open: s.Opener(), wait: s.Wait, count: s, run: ref.Run}
	var conns []*net.TCPConn
	if r.tcp != nil {
		for len(conns) < r.spec.Parallel {
			c, _, err := r.tcp.Accept(setup)
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return nil, fmt.Errorf("bench: waiting for %d data streams: %w", r.spec.Parallel, err)
			}
			conns = append(conns, c.(*net.TCPConn))
		}
		r.tcp.Close()
	} else {
		// The first authenticated datagram (the client's hello) fixes the
		// data peer; connect to it so the kernel drops everyone else's.
		c := r.udp.Conn()
		c.SetReadDeadline(time.Now().Add(setupTimeout))
		buf := make([]byte, 2048)
		if _, _, err := r.udp.Read(buf); err != nil {
			return nil, fmt.Errorf("bench: waiting for the client's hello: %w", err)
		}
		c.SetReadDeadline(time.Time{})
		if err := connectUDP(c, r.udp.Peer()); err != nil {
			return nil, fmt.Errorf("bench: connect to %s: %w", r.udp.Peer(), err)
		}
	}
	// Meter before answering: the client sends as soon as it hears back.
	m, err := startMeter()
	if err != nil {
		for _, c := range conns {
			c.Close()
		}
		return nil, fmt.Errorf("bench: %w", err)
	}
	runCtx, stop := context.WithCancel(s.Context())
	r.cancel = stop
	go func() {
		defer close(r.done)
		defer stop()
		waited0, refused0 := s.RateHeld()
		opt := Options{Guard: g, meter: m, awake: r.awake}
		var side *Side
		switch {
		case r.tcp != nil && r.role == RoleSender:
			side = SendTCP(runCtx, r.spec, conns, opt)
		case r.tcp != nil:
			side = ReceiveTCP(runCtx, r.spec, conns, opt)
		case r.role == RoleResponder:
			side = Respond(runCtx, r.spec, r.udp.Conn(), opt)
		case r.role == RoleSender:
			side = SendUDP(runCtx, r.spec, r.udp.Conn(), opt)
		default:
			side = ReceiveUDP(runCtx, r.spec, r.udp.Conn(), opt)
		}
		for _, c := range conns {
			c.Close()
		}
		waited1, refused1 := s.RateHeld()
		side.LimitedBy = withSessionLimits(side.LimitedBy, sessionLimits(s, side, waited1-waited0, refused1-refused0))
		r.side = side
	}()
	return struct{}{}, nil
}

// markCut records that an end was stopped at the run's deadline rather
// than cancelled by its user.
func markCut(sd *Side) {
	if sd == nil {
		return
	}
	sd.Cut = true
	if sd.Error == "cancelled" {
		sd.Error = ""
	}
}

// rateHeldShare is the share of a run an end may spend waiting for the
// session's rate limit before the run counts as limited by it: a sender
// under the limit never waits (the bucket holds 10 ms of burst), one held
// at the limit waits most of the time.
const rateHeldShare = 0.01

// sessionLimits says which of the session's limits held an end back: the
// rate limit when its sends waited for a noticeable share of the run (or
// were refused), the session length when it ended the run.
func sessionLimits(s *agent.Session, side *Side, waited time.Duration, refused int64) []Limit {
	var ls []Limit
	if d := side.Duration; side.Role == RoleSender || side.Role == RoleResponder {
		if refused > 0 || d > 0 && float64(waited) > rateHeldShare*float64(d) {
			share := 0.0
			if d > 0 {
				share = 100 * min(float64(waited)/float64(d), 1)
			}
			ls = append(ls, Limit{Limit: LimitAgentRate, HeldNs: int64(waited), Detail: fmt.Sprintf(
				"the agent's send limit of %s per session (%s) held its sends back for %s %% of the run; start the agent with a higher --max-rate to measure the path",
				units.FormatRate(s.Limits.MaxRateBitsPerSec), s.RateBasis, units.FormatPercent(share, 0))})
		}
	}
	if errors.Is(s.Context().Err(), context.DeadlineExceeded) {
		ls = append(ls, Limit{Limit: LimitAgentDuration, Detail: fmt.Sprintf(
			"the agent ends a session after %v (its --max-duration) and cut the run there", s.Limits.MaxDuration)})
	}
	return ls
}

// withSessionLimits adds the session's limits to an end's own, less its
// sender-late when the agent's rate limit held it: that is why it was late.
func withSessionLimits(own, session []Limit) []Limit {
	held := false
	for _, l := range session {
		held = held || l.Limit == LimitAgentRate
	}
	for _, l := range own {
		if l.Limit != LimitSenderLate || !held {
			session = append(session, l)
		}
	}
	return session
}

// serveResult returns the agent's Side once its end is done (after
// cancelling it when asked to stop).
func serveResult(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var ref RunRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("bench.result: %w", err)
	}
	r, err := lookup(s, ref.Run)
	if err != nil {
		return nil, err
	}
	if r.cancel == nil {
		return nil, errors.New("bench: run not started")
	}
	if ref.Stop {
		r.cancel()
	}
	var deadline <-chan time.Time
	if ref.WaitNs > 0 {
		t := time.NewTimer(time.Duration(ref.WaitNs))
		defer t.Stop()
		deadline = t.C
	}
	cut := false
	select {
	case <-r.done:
	case <-deadline:
		// Still running at the run's deadline: it stalled. Cut it; what it
		// measured until now is its result.
		cut = true
		r.cancel()
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if cut {
		markCut(r.side)
	}
	runs.Lock()
	delete(runs.m[s], ref.Run)
	runs.Unlock()
	if r.udp != nil {
		r.udp.Close()
	}
	return r.side, nil
}
