package traffic

import "github.com/interlink/interlink/internal/counters"

import "context"

// Guard protects the datagrams of an authenticated session (the agent and
// `interlink bench` use the session's keys): every datagram starts with
// Overhead bytes that Seal fills and Open verifies, after which the
// engine's own header follows. Wait applies the session's rate limit to an
// end that sends on the agent's behalf. In-process runs need no Guard.
type Guard interface {
	Overhead() int
	Seal(pkt []byte) error
	Open(pkt []byte) error
	Wait(ctx context.Context, bytes int) error
	// Hello reports whether pkt, which is not a datagram of the run, is
	// the session's own hello for this run: the client repeats it until
	// the agent has started, so a repeat can arrive after the run began.
	// The ends skip it rather than count a datagram refused.
	Hello(pkt []byte) bool
}

// Options are the optional parts of an end.
type Options struct {
	Observer Observer // per-interval lines as they close
	Guard    Guard    // session protection of datagrams; nil in-process

	// meter, when set, was started by the caller before the peer was told
	// to begin, so the first packets fall inside the counter deltas (an end
	// that starts its own meter can miss what the peer sent before it).
	meter *meter
	// awake, when set, is the end's receive path awake, measured by the
	// caller before it started the meter (awakeFor); otherwise the end
	// measures it before its own meter.
	awake *awake
}

// awakeOr is the end's receive path awake: the caller's, or measured now
// for datagrams of size(spec) bytes.
func (o Options) awakeOr(spec Spec, size func(Spec) int) awake {
	if o.awake != nil {
		return *o.awake
	}
	return awakeFor(spec, size)
}

// meter measures the kernel counters of the calling thread's network
// namespace and the host's softirq time between start and stop. Both must be
// called on a thread that sits in the end's namespace.
type meter struct {
	before *counters.Snapshot
	netns  string // the namespace the counters are of (NetnsID)
}

func (o Options) overhead() int {
	if o.Guard == nil {
		return 0
	}
	return o.Guard.Overhead()
}

func (o Options) seal(pkt []byte) error {
	if o.Guard == nil {
		return nil
	}
	return o.Guard.Seal(pkt)
}

func (o Options) open(pkt []byte) error {
	if o.Guard == nil {
		return nil
	}
	return o.Guard.Open(pkt)
}

// hello reports whether pkt is a late repeat of the session's hello (see
// Guard.Hello); never in-process, where there is no hello. Only datagrams
// already found not to be the run's ask, so the data path pays nothing.
func (o Options) hello(pkt []byte) bool {
	return o.Guard != nil && o.Guard.Hello(pkt)
}

func (o Options) wait(ctx context.Context, n int) error {
	if o.Guard == nil {
		return nil
	}
	return o.Guard.Wait(ctx, n)
}
