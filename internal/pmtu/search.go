package pmtu

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
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
	// each round narrows the interval by a factor Parallel+1.
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
	s := &search{p: p, opt: opt}
	limit := min(localMTU, maxIPPacket)
	if localMTU <= 0 {
		limit = maxIPPacket
	}
	if opt.Max > 0 {
		limit = min(limit, opt.Max)
	}
	lo, hi := 0, limit+1 // largest passed, smallest failed
	minSize := p.MinSize()
	if limit < minSize {
		return r, fmt.Errorf("largest size %d is below the smallest probe (%d bytes)", limit, minSize)
	}
	// First round: reachability (smallest probe), the common 1500, and the
	// largest the interface allows, which on a healthy path is the answer.
	first := []int{minSize, limit}
	if minSize < 1500 && 1500 < limit {
		first = append(first, 1500)
	}
	var err error
	// silent holds the sizes that failed by silence (no ack, no ICMP): the
	// only failures random loss can fake.
	silent := map[int]int{} // size: probes sent without answer
	verified, again := false, false
	for round := 0; round < 30; round++ {
		var sizes []int
		switch {
		case hi-lo <= 1 && (verified || hi > limit || silent[hi] == 0 || lo == 0):
			// Done: the boundary is a definite failure (ICMP, local), was
			// re-checked, or nothing failed at all.
		case hi-lo <= 1:
			// The boundary rests on silence: check it once more before
			// calling it a limit, so a burst of loss cannot fake one.
			verified = true
			sizes = []int{hi}
		case round == 0:
			sizes = first
		case s.patient:
			sizes = []int{minSize}
		case again:
			// The patient round was answered: the first round's sizes
			// were lost to a late peer, not to the path. Ask them again.
			again, sizes = false, first[1:]
		case s.icmpMTU > lo && s.icmpMTU < hi:
			// A hop told us its MTU: verify it and the byte above.
			sizes = []int{s.icmpMTU}
			if s.icmpMTU+1 < hi {
				sizes = append(sizes, s.icmpMTU+1)
			}
		default:
			sizes = spread(lo, hi, opt.Parallel)
		}
		if len(sizes) == 0 {
			break
		}
		var res map[int]*outcome
		res, err = s.round(ctx, sizes)
		if err != nil {
			break
		}
		for _, size := range sortedKeys(res) {
			if res[size].passed && size > lo {
				lo = size
			}
		}
		if lo >= hi {
			// The boundary passed on re-check: it was loss. Resume above it
			// from the next failure seen, or the top.
			hi = limit + 1
			for size := range silent {
				if size > lo && size < hi {
					hi = size
				}
			}
			verified = false
		}
		for _, size := range sortedKeys(res) {
			o := res[size]
			if o.passed {
				s.lost += silent[size] // it failed before: that was loss
				delete(silent, size)
				continue
			}
			if !o.tooBig && !o.local {
				silent[size] += o.sent
			}
			if size < lo {
				// Failed although a larger size passed: loss, not a limit.
				s.lost += o.sent
				continue
			}
			if size < hi {
				hi = size
			}
		}
		if s.patient {
			s.patient = false
			if lo == 0 {
				break // not even the smallest probe, twice: unreachable
			}
			hi, again, verified = limit+1, true, false
		}
		if round == 0 && lo == 0 {
			if s.unreach != "" || ctx.Err() != nil {
				break // an ICMP error said so: unreachable
			}
			// Nothing answered within the first window (0.3 s): ask once
			// more with the smallest probe and the longest wait before
			// calling the path unreachable. A peer on a loaded machine (an
			// agent among a hundred on two cores while a mesh runs) can
			// miss the first window; a dead path costs MaxTimeout more.
			s.patient = true
		}
	}
	r.Probes, r.Lost = s.probes, s.lost
	r.RTT = latency.FromDurations(s.rtts)
	r.Elapsed = time.Since(start)
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
		if limit == localMTU && ((opt.PeerMTU > localMTU) || (opt.Expect > localMTU)) {
			r.Verdict = LocalLimit
		}
	case s.icmpMTU > 0 && s.icmpMTU >= lo && s.icmpMTU < hi:
		r.Verdict = ICMP
	default:
		r.Verdict = Blackhole
	}
	if r.Verdict == OK && limit < localMTU {
		r.Detail = fmt.Sprintf("everything up to the requested maximum %d arrives", limit)
	} else {
		r.explain()
	}
	return r, err
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

func sortedKeys(m map[int]*outcome) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func (s *search) timeout() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout
	}
	if s.maxRTT == 0 {
		return max(s.opt.MinTimeout, 250*time.Millisecond)
	}
	return min(max(4*s.maxRTT+20*time.Millisecond, s.opt.MinTimeout), s.opt.MaxTimeout)
}

// gap is the wait before re-sending unanswered probes.
func (s *search) gap() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout / 10
	}
	if s.maxRTT == 0 {
		return min(20*time.Millisecond, s.timeout())
	}
	return min(max(2*s.maxRTT, 10*time.Millisecond), s.timeout())
}

// round probes sizes in parallel, each up to Tries times, until each has
// passed or definitely failed.
func (s *search) round(ctx context.Context, sizes []int) (map[int]*outcome, error) {
	res := map[int]*outcome{}
	ids := map[uint64]int{}
	sentAt := map[uint64]time.Time{}
	pending := map[int]bool{}
	for _, size := range sizes {
		res[size] = &outcome{}
		pending[size] = true
	}
	events := s.p.Events()
	drain(events)
	for attempt := 0; attempt < s.opt.Tries && len(pending) > 0; attempt++ {
		for _, size := range sortedKeysBool(pending) {
			id, err := s.p.Send(ctx, size)
			if errors.Is(err, ErrLocalTooBig) {
				res[size].local = true
				delete(pending, size)
				continue
			}
			if err != nil {
				return res, err
			}
			s.probes++
			res[size].sent++
			ids[id] = size
			sentAt[id] = time.Now()
		}
		// Retries go out quickly (a lost probe is re-sent after a few
		// round trips, not after a full timeout), and the round ends one
		// timeout after the last attempt: a blackhole costs one timeout per
		// round, not Tries of them.
		wait := s.timeout()
		if attempt < s.opt.Tries-1 {
			wait = s.gap()
		}
		timer := time.NewTimer(wait)
	wait:
		for len(pending) > 0 {
			select {
			case <-ctx.Done():
				timer.Stop()
				return res, ctx.Err()
			case <-timer.C:
				break wait
			case ev := <-events:
				switch ev.Kind {
				case EvAck:
					size, ok := ids[ev.ID]
					if !ok {
						continue // a late ack from an earlier round
					}
					if at, ok := sentAt[ev.ID]; ok { // once per probe, even if acked twice
						rtt := time.Since(at)
						s.maxRTT = max(s.maxRTT, rtt)
						s.rtts = append(s.rtts, rtt)
						delete(sentAt, ev.ID)
					}
					res[size].acked++
					res[size].passed = true
					delete(pending, size)
				case EvTooBig:
					if ev.MTU > 0 && (s.icmpMTU == 0 || ev.MTU < s.icmpMTU) {
						s.icmpMTU, s.icmpBy = ev.MTU, ev.From
					}
					// Everything in flight above the reported MTU failed,
					// definitely: no retry needed.
					for size := range pending {
						if size > ev.MTU || ids[ev.ID] == size {
							res[size].tooBig = true
							delete(pending, size)
						}
					}
				case EvUnreach:
					s.unreach = fmt.Sprintf("%s reported %s", ev.From, ev.Info)
				}
			}
		}
		timer.Stop()
	}
	for _, o := range res {
		if o.passed && o.sent > o.acked {
			s.lost += o.sent - o.acked
		}
	}
	return res, nil
}

func sortedKeysBool(m map[int]bool) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func drain(ch <-chan Event) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
