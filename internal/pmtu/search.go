package pmtu

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/interlink/interlink/internal/latency"
)

// ErrLocalTooBig is returned by a Prober's Send when the sending interface
// cannot carry the packet (EMSGSIZE): a local limit, known without waiting.
var ErrLocalTooBig = errors.New("packet larger than the local interface MTU")

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	EvAck     EventKind = iota + 1 // the probe ID arrived
	EvTooBig                       // a hop reported its MTU (ICMP frag needed / packet too big)
	EvUnreach                      // a hop reported the destination unreachable
)

// Event is what a Prober reports about its probes. ID is the probe's ID
// when known (0 when an ICMP error quoted too little to tell).
type Event struct {
	Kind EventKind
	ID   uint64
	MTU  int        // EvTooBig: the reported next-hop MTU
	From netip.Addr // EvTooBig, EvUnreach: who reported it
	Info string     // EvUnreach: what was reported
}

// Prober sends probes in one direction. Implementations: Conn (UDP, with an
// agent) and ICMPProber.
type Prober interface {
	// Send sends one probe of size bytes (IP packet) and returns its ID. It
	// returns ErrLocalTooBig when the local interface refuses the size.
	Send(ctx context.Context, size int) (uint64, error)
	// Events delivers acks and ICMP errors for the probes sent.
	Events() <-chan Event
	// HeaderBytes is the IP + transport header size of a probe; Send
	// refuses sizes below MinSize.
	HeaderBytes() int
	MinSize() int
	// Local describes the sending side: address, interface, its MTU.
	Local() (addr netip.Addr, iface string, mtu int)
	Remote() netip.Addr
	Method() string
}

// Options tune Run. The zero value gives the defaults.
type Options struct {
	// Tries is how often a size is sent before it counts as failed
	// (default 3), so random loss is not mistaken for a size limit.
	Tries int
	// MinTimeout and MaxTimeout bound the wait for one attempt; the wait
	// adapts to the measured round-trip time (default 100 ms and 1 s).
	MinTimeout, MaxTimeout time.Duration
	// Max caps the largest size tried (default: the local interface MTU).
	Max int
	// Expect, when set, is the MTU the operator expects: a local interface
	// below it is reported as local-limit.
	Expect int
	// PeerMTU, when known, is the receiving interface's MTU.
	PeerMTU int
	// Parallel is how many sizes are probed at once per round (default 7):
	// each round narrows the interval by a factor Parallel+1. A round is
	// over a few round trips after its start (what came back decides it);
	// only the boundary found that way is re-checked with Tries probes and
	// a whole timeout.
	Parallel int
}

func (o *Options) defaults() {
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.MinTimeout <= 0 {
		o.MinTimeout = 100 * time.Millisecond
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = time.Second
	}
	if o.MaxTimeout < o.MinTimeout {
		o.MaxTimeout = o.MinTimeout
	}
	if o.Parallel <= 0 {
		o.Parallel = 7
	}
}

// maxIPPacket is the largest IPv4 packet; IPv6 jumbograms are out of scope.
const maxIPPacket = 65535

// outcome of one size in a round.
type outcome struct {
	passed bool
	late   bool // only a late ack of an earlier round's probe
	local  bool // refused by the local interface
	tooBig bool // a hop reported it too big
	sent   int
	acked  int
}

type search struct {
	p       Prober
	opt     Options
	maxRTT  time.Duration
	rtts    []time.Duration // of every answered probe
	probes  int
	lost    int
	icmpMTU int
	icmpBy  netip.Addr
	unreach string
	// patience counts the patient rounds done.
	patience int
	// patient is set for the round that re-checks the smallest probe when
	// nothing at all was answered: it waits MaxTimeout.
	patient bool
	// waited is the time spent only waiting out timeouts: rounds that
	// ended with probes unanswered, from their last send or event.
	waited time.Duration

	// limit is the largest size tried, minSize the smallest probe; the
	// interval searched is lo, the largest size passed, to hi, the
	// smallest failed (limit+1 while nothing failed).
	limit, minSize, lo, hi int

	// first is the first round's sizes, asked again after a patient round.
	first []int
	// silent holds the sizes that failed by silence (no ack, no ICMP): the
	// only failures random loss can fake.
	silent map[int]int // size: probes sent without answer
	// verified: the boundary resting on silence was re-checked; again: the
	// patient round was answered, the first round's sizes are asked again.
	verified, again bool
	// voids counts re-checks in a row that proved nothing; after one, full
	// rounds wait MaxTimeout until a re-check proves something.
	voids int
	// peerSilent: the last re-check proved nothing either, and was
	// believed anyway.
	peerSilent bool

	// sizeOf and sentAt know every probe of the search, so that an ack
	// that comes after its round ended still counts (the size passed).
	sizeOf map[uint64]int
	sentAt map[uint64]time.Time // until answered
}

// Run finds the path MTU of p's direction. It always returns a Result
// (with what was learned) and an error only when ctx ended or the prober
// failed in a way that says nothing about the path.
func Run(ctx context.Context, p Prober, opt Options) (Result, error) {
	opt.defaults()
	start := time.Now()
	local, iface, localMTU := p.Local()
	r := Result{From: local.String(), To: p.Remote().String(), Method: p.Method(), HeaderBytes: p.HeaderBytes(),
		LocalMTU: localMTU, LocalIface: iface, PeerMTU: opt.PeerMTU, Family: "ipv4"}
	if p.Remote().Is6() && !p.Remote().Is4In6() {
		r.Family = "ipv6"
	}
	s := newSearch(p, opt, localMTU)
	if s.limit < s.minSize {
		return r, fmt.Errorf("largest size %d is below the smallest probe (%d bytes)", s.limit, s.minSize)
	}
	err := s.run(ctx)
	s.fill(&r)
	r.Elapsed = time.Since(start)
	return r, err
}

// newSearch sets up the search of p's direction: the largest size tried
// (the local MTU, capped by opt.Max and the largest IP packet) and the
// first round's sizes: reachability (smallest probe), the common 1500, and
// the largest the interface allows, which on a healthy path is the answer.
func newSearch(p Prober, opt Options, localMTU int) *search {
	s := &search{p: p, opt: opt, minSize: p.MinSize(), silent: map[int]int{}, sizeOf: map[uint64]int{}, sentAt: map[uint64]time.Time{}}
	s.limit = min(localMTU, maxIPPacket)
	if localMTU <= 0 {
		s.limit = maxIPPacket
	}
	if opt.Max > 0 {
		s.limit = min(s.limit, opt.Max)
	}
	s.lo, s.hi = 0, s.limit+1
	s.first = []int{s.minSize, s.limit}
	if s.minSize < 1500 && 1500 < s.limit {
		s.first = append(s.first, 1500)
	}
	return s
}

// fill puts what the search learned into r, with its verdict.
func (s *search) fill(r *Result) {
	lo, hi, limit := s.lo, s.hi, s.limit
	r.Probes, r.Lost, r.Waited = s.probes, s.lost, s.waited
	r.PeerSilent = s.peerSilent && hi <= limit
	r.RTT = latency.FromDurations(s.rtts)
	r.PathMTU = lo
	if lo > 0 {
		r.PayloadPassed = lo - r.HeaderBytes
	}
	if hi <= limit {
		r.SmallestFailed = hi
		r.PayloadFailed = hi - r.HeaderBytes
	}
	if s.icmpMTU > 0 {
		r.ICMPFrom, r.ICMPMTU = s.icmpBy.String(), s.icmpMTU
	}
	switch {
	case lo == 0:
		r.Verdict = Unreachable
		if s.unreach != "" {
			r.Detail = s.unreach
		}
	case hi > limit:
		r.Verdict = OK
		if limit == r.LocalMTU && ((s.opt.PeerMTU > r.LocalMTU) || (s.opt.Expect > r.LocalMTU)) {
			r.Verdict = LocalLimit
		}
	case s.icmpMTU > 0 && s.icmpMTU >= lo && s.icmpMTU < hi:
		r.Verdict = ICMP
	default:
		r.Verdict = Blackhole
	}
	if r.Verdict == OK && limit < r.LocalMTU {
		r.Detail = fmt.Sprintf("everything up to the requested maximum %d arrives", limit)
	} else {
		r.explain()
	}
}

// spread returns up to n sizes evenly spaced strictly between lo and hi.
func spread(lo, hi, n int) []int {
	gap := hi - lo - 1
	if gap <= 0 {
		return nil
	}
	n = min(n, gap)
	out := make([]int, 0, n)
	for i := 1; i <= n; i++ {
		v := lo + (hi-lo)*i/(n+1)
		if v > lo && v < hi && (len(out) == 0 || out[len(out)-1] != v) {
			out = append(out, v)
		}
	}
	return out
}
