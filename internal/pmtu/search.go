package pmtu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
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

	// sizeOf and sentAt know every probe of the search, so that an ack
	// that comes after its round ended still counts (the size passed).
	sizeOf map[uint64]int
	sentAt map[uint64]time.Time // until answered
}

// plan is one round: its sizes, and whether it is a full round (each size
// sent up to Tries times, the last wait a whole timeout) or a quick one
// (each size sent once, the round over a few round trips after its start:
// what is unanswered by then is only suspected, and any boundary resting
// on such a silence is re-checked by a full round before it is believed).
type plan struct {
	sizes []int
	full  bool
	tries int // of a full round
	// control, when set, is a size known to pass, sent with the boundary
	// it re-checks: the boundary's silence counts only if the control
	// was answered in the same round. A peer that stalls (an agent
	// descheduled on a loaded machine) answers neither, and then the
	// round proves nothing.
	control int
}

// falseLimit is the chance, at most, that the re-check of a boundary
// calls a size that passes a limit, given the loss seen; maxTries bounds
// the probes it sends for that (the agent's cap on Options.Tries).
const (
	falseLimit = 1e-6
	maxTries   = 10
)

// verifyTries is how many probes the re-check of a boundary sends: enough
// that round trips lost at the rate seen so far all fail with a chance
// under falseLimit; at least Options.Tries, at most maxTries. The rate
// starts from a prior of 1 round trip in 50 lost (1 % each way), which
// the search's own probes outweigh as they are answered or lost: 4 probes
// at that rate, 10 at 25 % or more.
func (s *search) verifyTries() int {
	p := float64(s.lost+1) / float64(s.lost+len(s.rtts)+50)
	n := int(math.Ceil(math.Log(falseLimit) / math.Log(p)))
	return min(max(n, s.opt.Tries), max(maxTries, s.opt.Tries))
}

// maxVoids is how many re-checks of a boundary may prove nothing (the
// control unanswered) before the last one is believed anyway.
const maxVoids = 2

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

// run probes round by round until the boundary is settled or nothing more
// can be learned.
func (s *search) run(ctx context.Context) error {
	return s.loop(ctx, s.round)
}

// maxRounds bounds a search: a byte-exact search of 64 KiB takes about ten
// quick rounds, and each burst of loss that misleads one costs a few more.
const maxRounds = 40

// loop is the search's decisions: it plans each round, has do probe it,
// and learns from the outcomes. Tests drive it with a model of a path.
func (s *search) loop(ctx context.Context, do func(context.Context, plan) (map[int]*outcome, error)) error {
	for round := 0; round < maxRounds; round++ {
		pl := s.next(round)
		if len(pl.sizes) == 0 {
			return nil
		}
		res, err := do(ctx, pl)
		if err != nil {
			return err
		}
		if o := res[pl.control]; pl.control > 0 {
			if (o == nil || !o.passed) && s.voids < maxVoids {
				// Neither the boundary nor the size known to pass
				// came back: the peer stalled. Re-check again, more
				// patiently.
				s.voids++
				s.verified = false
				continue
			}
			s.voids = 0
		}
		delete(res, pl.control) // answered, or believed anyway: says nothing new
		s.learn(res)
		if !s.afterRound(ctx, round) {
			return nil
		}
	}
	return nil
}

// next plans the next round; no sizes when the search is done. Only two
// kinds of round wait out a whole timeout: the one that re-checks a
// boundary resting on silence (a blackhole pays that once, not once per
// size), and the patient one after an unanswered start.
func (s *search) next(round int) plan {
	switch {
	case s.hi-s.lo <= 1 && (s.verified || s.hi > s.limit || s.silent[s.hi] == 0 || s.lo == 0):
		// Done: the boundary is a definite failure (ICMP, local), was
		// re-checked, or nothing failed at all.
		return plan{}
	case s.hi-s.lo <= 1:
		// The boundary rests on silence: check it Tries times, with a
		// whole timeout, before calling it a limit, so that loss cannot
		// fake one; and with the largest size that passed, so that a
		// stalled peer cannot either.
		s.verified = true
		return plan{sizes: []int{s.lo, s.hi}, full: true, tries: s.verifyTries(), control: s.lo}
	case round == 0:
		return plan{sizes: s.first}
	case s.patient:
		return plan{sizes: []int{s.minSize}, full: true, tries: s.opt.Tries}
	case s.again:
		// The patient round was answered: the first round's sizes
		// were lost to a late peer, not to the path. Ask them again.
		s.again = false
		return plan{sizes: s.first[1:]}
	case s.icmpMTU > s.lo && s.icmpMTU < s.hi:
		// A hop told us its MTU: verify it and the byte above.
		sizes := []int{s.icmpMTU}
		if s.icmpMTU+1 < s.hi {
			sizes = append(sizes, s.icmpMTU+1)
		}
		return plan{sizes: sizes}
	}
	return plan{sizes: spread(s.lo, s.hi, s.opt.Parallel)}
}

// learn narrows the interval by a round's outcomes.
func (s *search) learn(res map[int]*outcome) {
	for _, size := range slices.Sorted(maps.Keys(res)) {
		if res[size].passed && size > s.lo {
			s.lo = size
		}
	}
	if s.lo >= s.hi {
		// The boundary passed on re-check: it was loss, or a peer that
		// stalled, and so may every silence above it be. Search above it
		// again up to the top, with quick rounds: cheaper than re-checking
		// each of those silences with a full one.
		s.hi = s.limit + 1
		for size := range s.silent {
			if size > s.lo {
				delete(s.silent, size)
			}
		}
		s.verified = false
	}
	for _, size := range slices.Sorted(maps.Keys(res)) {
		o := res[size]
		if o.passed {
			lost := s.silent[size] // it failed before: that was loss
			if o.late {
				lost-- // but this one was only late
			}
			s.lost += max(lost, 0)
			delete(s.silent, size)
			continue
		}
		if !o.tooBig && !o.local {
			s.silent[size] += o.sent
		}
		if size < s.lo {
			// Failed although a larger size passed: loss, not a limit.
			s.lost += o.sent
			continue
		}
		if size < s.hi {
			s.hi = size
		}
	}
}

// afterRound handles an unanswered start: it reports false when the
// search ends here.
func (s *search) afterRound(ctx context.Context, round int) bool {
	if s.patient {
		s.patient = false
		if s.lo == 0 {
			return false // not even the smallest probe, twice: unreachable
		}
		s.hi, s.again, s.verified = s.limit+1, true, false
	}
	if round == 0 && s.lo == 0 {
		if s.unreach != "" || ctx.Err() != nil {
			return false // an ICMP error said so: unreachable
		}
		// Nothing answered within the first window (0.3 s): ask once
		// more with the smallest probe and the longest wait before
		// calling the path unreachable. A peer on a loaded machine (an
		// agent among a hundred on two cores while a mesh runs) can
		// miss the first window; a dead path costs MaxTimeout more.
		s.patient = true
	}
	return true
}

// fill puts what the search learned into r, with its verdict.
func (s *search) fill(r *Result) {
	lo, hi, limit := s.lo, s.hi, s.limit
	r.Probes, r.Lost, r.Waited = s.probes, s.lost, s.waited
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
