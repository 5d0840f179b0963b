package pmtu

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/subtests"
)

// fakePath simulates one direction: packets above pathMTU are dropped
// (silently, or with an ICMP error from a router when icmp is set), a
// fraction of all probes is lost at random, and the local interface
// refuses sizes above localMTU.
type fakePath struct {
	localMTU, pathMTU int
	icmp              bool
	loss              float64
	dead              bool
	drops             map[int]int   // size: how many of its first probes vanish (a loss burst)
	delay             time.Duration // before an ack arrives (0: at once)

	mu     sync.Mutex
	id     uint64
	rng    *rand.Rand
	events chan Event
}

func newFake(local, path int) *fakePath {
	return &fakePath{localMTU: local, pathMTU: path, rng: rand.New(rand.NewSource(1)), events: make(chan Event, 1024)}
}

func (f *fakePath) Send(ctx context.Context, size int) (uint64, error) {
	if size > f.localMTU {
		return 0, ErrLocalTooBig
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.id++
	id := f.id
	switch {
	case f.dead:
	case f.drops[size] > 0:
		f.drops[size]--
	case size > f.pathMTU && f.icmp:
		f.events <- Event{Kind: EvTooBig, ID: id, MTU: f.pathMTU, From: netip.MustParseAddr("198.18.9.1")}
	case size > f.pathMTU:
	case f.rng.Float64() < f.loss:
	case f.delay > 0:
		time.AfterFunc(f.delay, func() { f.events <- Event{Kind: EvAck, ID: id} })
	default:
		f.events <- Event{Kind: EvAck, ID: id}
	}
	return id, nil
}

func (f *fakePath) Events() <-chan Event { return f.events }
func (f *fakePath) HeaderBytes() int     { return 28 }
func (f *fakePath) MinSize() int         { return 76 }
func (f *fakePath) Local() (netip.Addr, string, int) {
	return netip.MustParseAddr("198.18.0.1"), "eth1", f.localMTU
}
func (f *fakePath) Remote() netip.Addr { return netip.MustParseAddr("198.18.0.2") }
func (f *fakePath) Method() string     { return "fake" }

func TestSearch(t *testing.T) {
	t.Parallel()
	fast := Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: 5 * time.Millisecond}
	cases := []struct {
		name    string
		f       *fakePath
		opt     Options
		verdict Verdict
		mtu     int
		failed  int
	}{
		{"healthy", newFake(9000, 9000), fast, OK, 9000, 0},
		{"blackhole", newFake(9000, 1500), fast, Blackhole, 1500, 1501},
		{"blackhole odd", newFake(9000, 4321), fast, Blackhole, 4321, 4322},
		{"icmp", func() *fakePath { f := newFake(9000, 1400); f.icmp = true; return f }(), fast, ICMP, 1400, 1401},
		{"local limit (peer larger)", newFake(1500, 9000), Options{MinTimeout: 5 * time.Millisecond, PeerMTU: 9000}, LocalLimit, 1500, 0},
		{"local limit (expect)", newFake(1500, 9000), Options{MinTimeout: 5 * time.Millisecond, Expect: 9000}, LocalLimit, 1500, 0},
		{"unreachable", func() *fakePath { f := newFake(9000, 9000); f.dead = true; return f }(), fast, Unreachable, 0, 76},
		{"loss burst at the top", func() *fakePath { f := newFake(9000, 9000); f.drops = map[int]int{9000: 3}; return f }(), fast, OK, 9000, 0},
		{"loss burst at the boundary", func() *fakePath { f := newFake(9000, 3000); f.drops = map[int]int{3000: 3}; return f }(), fast, Blackhole, 3000, 3001},
		{"lossy path at 4000", func() *fakePath { f := newFake(9000, 4000); f.loss = 0.4; return f }(), fast, Blackhole, 4000, 4001},
		{"lossy blackhole", func() *fakePath { f := newFake(9000, 2000); f.loss = 0.2; return f }(), Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: 5 * time.Millisecond, Tries: 6}, Blackhole, 2000, 2001},
	}
	// All at once: each case has its own fake path and waits on the
	// search's timers (the unreachable one the whole first window).
	subtests.AtOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) {
		c := cases[i]
		r, err := Run(context.Background(), c.f, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != c.verdict || r.PathMTU != c.mtu || r.SmallestFailed != c.failed {
			t.Fatalf("got %s %d (failed %d), want %s %d (failed %d): %+v", r.Verdict, r.PathMTU, r.SmallestFailed, c.verdict, c.mtu, c.failed, r)
		}
		if r.PathMTU > 0 && r.PayloadPassed != r.PathMTU-28 {
			t.Fatalf("payload %d for %d", r.PayloadPassed, r.PathMTU)
		}
		if c.verdict == ICMP && (r.ICMPFrom != "198.18.9.1" || r.ICMPMTU != 1400) {
			t.Fatalf("icmp reporter: %+v", r)
		}
		if (strings.HasPrefix(c.name, "lossy") || strings.HasPrefix(c.name, "loss burst")) && r.Lost == 0 {
			t.Fatalf("20%% loss not reported: %+v", r)
		}
		t.Logf("%s: %s (%s) %d probes in %s", r.Verdict, r.Line(), r.Detail, r.Probes, r.Elapsed)
	})
}

// A peer that answers after the first window (0.3 s without a known round
// trip: a loaded agent) is asked once more, patiently, and its path is
// measured, not called unreachable; the probes it missed count as lost.
func TestSearchSlowFirstAnswer(t *testing.T) {
	f := newFake(9000, 9000)
	f.delay = 400 * time.Millisecond
	r, err := Run(context.Background(), f, Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != OK || r.PathMTU != 9000 || r.Lost == 0 {
		t.Fatalf("got %s %d, %d lost: %+v", r.Verdict, r.PathMTU, r.Lost, r)
	}
}

// A truly dead path: the patient rounds wait MaxTimeout twice more, then
// say so. Parallel: it waits, and times nothing (TestSearchSlowFirstAnswer,
// which depends on when its answers come, is not).
func TestSearchDeadAfterPatientRound(t *testing.T) {
	t.Parallel()
	f := newFake(9000, 9000)
	f.dead = true
	r, _ := Run(context.Background(), f, Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: 50 * time.Millisecond})
	if r.Verdict != Unreachable || r.Probes != 3+patientRounds*3 {
		t.Fatalf("dead path: %s after %d probes: %+v", r.Verdict, r.Probes, r)
	}
}

func TestLine(t *testing.T) {
	r := Result{PathMTU: 9000, PayloadPassed: 8972, SmallestFailed: 9001, PayloadFailed: 8973}
	if got, want := r.Line(), "8972 bytes of payload, 9000 on the wire, pass; 8973 do not"; got != want {
		t.Fatalf("Line() = %q, want %q", got, want)
	}
}

func TestSpread(t *testing.T) {
	if got := spread(1500, 1503, 7); len(got) != 2 || got[0] != 1501 || got[1] != 1502 {
		t.Fatalf("spread(1500,1503) = %v", got)
	}
	got := spread(1500, 9001, 7)
	if len(got) != 7 || got[0] <= 1500 || got[6] >= 9001 {
		t.Fatalf("spread(1500,9001) = %v", got)
	}
}

// Each answered probe is timed from its send to its ack: the summary holds
// the fake path's delay, one sample per answered probe, and nothing when
// no probe came back (so JSON omits it).
func TestSearchRTT(t *testing.T) {
	t.Parallel() // bound by the search's waits; no upper bound on a round trip
	f := newFake(9000, 4000)
	f.delay = 3 * time.Millisecond
	// Each round that finds a size too big waits one timeout (30 ms, ten
	// times the path's round trip).
	r, err := Run(context.Background(), f, Options{MinTimeout: 30 * time.Millisecond, MaxTimeout: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := r.RTT
	if s.Count < 2 || s.Count > int64(r.Probes) {
		t.Fatalf("%d round trips timed of %d probes: %+v", s.Count, r.Probes, s)
	}
	// No ack comes before the delay, none after the search ended (a loaded
	// machine may delay acks, so no tighter upper bound).
	if s.Min < int64(3*time.Millisecond) || s.Max > int64(r.Elapsed) || s.Min > s.P50 || s.P50 > s.P90 ||
		s.P90 > s.P99 || s.P99 > s.Max {
		t.Fatalf("round trips of a 3 ms path: %+v", s)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"rtt":{"count":`) || !strings.Contains(string(b), `"p99_ns":`) {
		t.Fatalf("JSON without the rtt summary: %s", b)
	}
	var out strings.Builder
	(&Report{Peer: "x", Method: "fake", Directions: []Direction{{Result: r}}}).WriteText(&out)
	if !strings.Contains(out.String(), fmt.Sprintf("rtt min/p50/p99/max %.3f/", float64(s.Min)/1e6)) {
		t.Fatalf("text without the rtt: %s", out.String())
	}

	dead := newFake(9000, 9000)
	dead.dead = true
	r, _ = Run(context.Background(), dead, Options{MinTimeout: 5 * time.Millisecond, MaxTimeout: 5 * time.Millisecond})
	if r.RTT.Count != 0 {
		t.Fatalf("unreachable path with round trips: %+v", r.RTT)
	}
	if b, _ := json.Marshal(r); strings.Contains(string(b), `"rtt"`) {
		t.Fatalf("unreachable path: rtt in JSON: %s", b)
	}
	out.Reset()
	(&Report{Peer: "x", Method: "fake", Directions: []Direction{{Result: r}}}).WriteText(&out)
	if strings.Contains(out.String(), "rtt") {
		t.Fatalf("unreachable path: rtt in text: %s", out.String())
	}
}
