package pmtu

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// The search's decisions (search.loop: next and learn), driven by a model
// of a path instead of a network: no sockets, no clocks, so thousands of
// searches with seeded random loss run in well under a second.

// pathModel answers a round's plan as a path would: sizes above mtu
// vanish (or draw an ICMP error from a hop when icmp is set), sizes above
// local are refused by the interface, and every probe and every ack is
// lost with probability loss. late holds sizes whose first answered probe
// comes back only after its round ended (during the next round).
type pathModel struct {
	local, mtu int
	icmp       bool
	loss       float64
	rng        *rand.Rand
	late       map[int]int // size: answers still to come late
	// stall is a span of model time in which the peer answers nothing
	// (an agent descheduled on a loaded machine). Model time counts in
	// quick windows (10 ms, the search's round trip is 1 ms): a probe takes
	// 0.01, a quick round 1, a full round 1 per retry and its timeout.
	stall [2]float64
	now   float64

	s            *search
	rounds, full int   // rounds planned, of them full (a whole timeout each)
	probes       int   // probes sent
	deferred     []int // sizes answered late, delivered with the next round
}

func (m *pathModel) lost() bool { return m.loss > 0 && m.rng.Float64() < m.loss }

func (m *pathModel) do(_ context.Context, pl plan) (map[int]*outcome, error) {
	m.rounds++
	if pl.full {
		m.full++
	}
	res := map[int]*outcome{}
	for _, size := range m.deferred {
		res[size] = &outcome{late: true, acked: 1, passed: true}
	}
	m.deferred = nil
	tries := 1
	if pl.full {
		tries = pl.tries
	}
	unit := func(d time.Duration) float64 { return float64(d) / float64(10*time.Millisecond) }
	sizes := slices.Sorted(slices.Values(pl.sizes)) // as send sends them
	for _, size := range sizes {
		if prev := res[size]; prev != nil {
			prev.late = false
		} else {
			res[size] = &outcome{}
		}
	}
	for t := range tries {
		for _, size := range sizes {
			if o := res[size]; !o.passed && !o.tooBig && !o.local {
				m.probe(size, o)
			}
		}
		switch {
		case !pl.full:
			m.now++
		case t < tries-1:
			m.now += unit(m.s.gap())
		default:
			m.now += unit(m.s.timeout())
		}
	}
	return res, nil
}

// probe sends one probe of size and records its fate in o.
func (m *pathModel) probe(size int, o *outcome) {
	if size > m.local {
		o.local = true
		return
	}
	o.sent++
	m.probes++
	m.now += 0.01
	switch {
	case m.now >= m.stall[0] && m.now <= m.stall[1]:
	case m.lost():
	case size > m.mtu && m.icmp:
		o.tooBig = true
		if m.s.icmpMTU == 0 || m.mtu < m.s.icmpMTU {
			m.s.icmpMTU = m.mtu
		}
	case size > m.mtu:
	case m.lost(): // the ack
	case m.late[size] > 0:
		m.late[size]--
		m.deferred = append(m.deferred, size)
	default:
		o.acked++
		o.passed = true
	}
}

// simulate runs one search of a path of local and mtu over the model and
// returns its result and the model (for its counts).
func simulate(t *testing.T, m *pathModel, opt Options) (Result, *pathModel) {
	t.Helper()
	opt.defaults()
	f := &fakePath{localMTU: m.local, pathMTU: m.mtu} // for its sizes only
	m.s = newSearch(f, opt, m.local)
	m.s.maxRTT = time.Millisecond
	if m.rng == nil {
		m.rng = rand.New(rand.NewSource(1))
	}
	if err := m.s.loop(context.Background(), m.do); err != nil {
		t.Fatal(err)
	}
	r := Result{HeaderBytes: f.HeaderBytes(), LocalMTU: m.local, PeerMTU: opt.PeerMTU}
	m.s.fill(&r)
	return r, m
}

// Without loss the search is exact for every boundary, and waits out a
// whole timeout at most once per direction: once when the boundary rests
// on silence (a blackhole), never on a healthy path or one whose hop
// sends ICMP.
func TestDecideExactOneTimeout(t *testing.T) {
	sizes := []int{76, 77, 78, 1499, 1500, 1501, 4321, 8998, 8999}
	rng := rand.New(rand.NewSource(7))
	for range 300 {
		sizes = append(sizes, 76+rng.Intn(9000-76))
	}
	for _, mtu := range sizes {
		r, m := simulate(t, &pathModel{local: 9000, mtu: mtu}, Options{})
		if r.Verdict != Blackhole || r.PathMTU != mtu || r.SmallestFailed != mtu+1 {
			t.Fatalf("blackhole at %d: %s %d (failed %d)", mtu, r.Verdict, r.PathMTU, r.SmallestFailed)
		}
		if m.full != 1 {
			t.Fatalf("blackhole at %d: %d full rounds (timeouts), want 1", mtu, m.full)
		}
		if m.rounds > 8 {
			t.Fatalf("blackhole at %d: %d rounds", mtu, m.rounds)
		}
		if r.Lost != 0 {
			t.Fatalf("blackhole at %d without loss: %d lost", mtu, r.Lost)
		}

		r, m = simulate(t, &pathModel{local: 9000, mtu: mtu, icmp: true}, Options{})
		if r.Verdict != ICMP || r.PathMTU != mtu || r.SmallestFailed != mtu+1 || m.full != 0 {
			t.Fatalf("icmp at %d: %s %d (failed %d), %d full rounds", mtu, r.Verdict, r.PathMTU, r.SmallestFailed, m.full)
		}
	}
	r, m := simulate(t, &pathModel{local: 9000, mtu: 9000}, Options{})
	if r.Verdict != OK || r.PathMTU != 9000 || m.full != 0 || m.rounds != 1 || m.probes != 3 {
		t.Fatalf("healthy: %s %d, %d rounds (%d full), %d probes", r.Verdict, r.PathMTU, m.rounds, m.full, m.probes)
	}
	r, m = simulate(t, &pathModel{local: 1500, mtu: 9000}, Options{PeerMTU: 9000})
	if r.Verdict != LocalLimit || r.PathMTU != 1500 || m.full != 0 {
		t.Fatalf("local limit: %s %d, %d full rounds", r.Verdict, r.PathMTU, m.full)
	}
	r, m = simulate(t, &pathModel{local: 9000, mtu: 9000}, Options{Max: 4000})
	if r.Verdict != OK || r.PathMTU != 4000 || m.full != 0 {
		t.Fatalf("max 4000: %s %d, %d full rounds", r.Verdict, r.PathMTU, m.full)
	}
}

// Nothing answers: patient full rounds re-check the smallest probe, then
// the path is unreachable.
func TestDecideUnreachable(t *testing.T) {
	r, m := simulate(t, &pathModel{local: 9000, mtu: 0}, Options{})
	if r.Verdict != Unreachable || m.rounds != 1+patientRounds || m.full != patientRounds || r.SmallestFailed != 76 {
		t.Fatalf("dead path: %s, %d rounds (%d full), failed %d", r.Verdict, m.rounds, m.full, r.SmallestFailed)
	}
}

// Random loss without a blackhole is never read as one. Each probe and
// each ack is lost with the given probability (a lossy link in both
// directions); the search runs with the default three tries. The bound on
// false blackholes is the claim: at 1 % loss a boundary is misread only if
// Tries probes and acks in a row are lost after a quick round misled the
// search, about 0.02 * 0.02^3 per path, so 20,000 searches without one say
// the rate is below 1 in 6,600 with 95 % confidence (rule of three), where
// the model's rate is about 1 in 6 million.
func TestDecideLossIsNotBlackhole(t *testing.T) {
	for _, c := range []struct {
		loss float64
		runs int
	}{{0.01, 20000}, {0.05, 5000}} {
		rng := rand.New(rand.NewSource(int64(c.loss * 1e4)))
		misled, lostSeen := 0, 0
		for range c.runs {
			r, m := simulate(t, &pathModel{local: 9000, mtu: 9000, loss: c.loss, rng: rng}, Options{})
			if r.Verdict != OK || r.PathMTU != 9000 {
				t.Fatalf("%.0f %% loss, no blackhole: %s %d (%s)", c.loss*100, r.Verdict, r.PathMTU, r.Detail)
			}
			if m.full > 0 {
				misled++
			}
			if r.Lost > 0 {
				lostSeen++
			}
		}
		if lostSeen == 0 {
			t.Fatalf("%.0f %% loss: no search counted a lost probe", c.loss*100)
		}
		t.Logf("%.0f %% loss: %d searches, all ok; %d re-checked a boundary, %d counted loss", c.loss*100, c.runs, misled, lostSeen)
	}
}

// With loss and a blackhole, the blackhole is still found to the byte.
func TestDecideLossyBlackhole(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := range 5000 {
		mtu := 1500
		if i%2 == 1 {
			mtu = 76 + rng.Intn(9000-76)
		}
		r, m := simulate(t, &pathModel{local: 9000, mtu: mtu, loss: 0.01, rng: rng}, Options{})
		if r.Verdict != Blackhole || r.PathMTU != mtu || r.SmallestFailed != mtu+1 {
			t.Fatalf("blackhole at %d with 1 %% loss: %s %d (failed %d)", mtu, r.Verdict, r.PathMTU, r.SmallestFailed)
		}
		if m.rounds >= maxRounds {
			t.Fatalf("blackhole at %d: %d rounds", mtu, m.rounds)
		}
	}
}

// A boundary misread by loss is re-checked, passes, and the search goes
// on above it: the lost probe is counted, the verdict and size are right.
func TestDecideBoundaryLossResumes(t *testing.T) {
	// The top size's only quick probe is lost: the first re-check (full
	// round) finds it passes.
	m := &pathModel{local: 9000, mtu: 9000, rng: rand.New(rand.NewSource(1))}
	m.loss = 0
	drop := map[int]bool{9000: true}
	inner := m.do
	first := true
	do := func(ctx context.Context, pl plan) (map[int]*outcome, error) {
		res, err := inner(ctx, pl)
		if first {
			first = false
			for size := range drop {
				res[size] = &outcome{sent: 1}
			}
		}
		return res, err
	}
	opt := Options{}
	opt.defaults()
	m.s = newSearch(&fakePath{localMTU: 9000, pathMTU: 9000}, opt, 9000)
	if err := m.s.loop(context.Background(), do); err != nil {
		t.Fatal(err)
	}
	var r Result
	r.LocalMTU = 9000
	m.s.fill(&r)
	if r.Verdict != OK || r.PathMTU != 9000 || r.Lost != 1 || m.full != 1 {
		t.Fatalf("lost top probe: %s %d, %d lost, %d full rounds", r.Verdict, r.PathMTU, r.Lost, m.full)
	}
}

// An ack that comes after its round ended still counts: the size passed,
// and it was late, not lost.
func TestDecideLateAck(t *testing.T) {
	r, m := simulate(t, &pathModel{local: 9000, mtu: 9000, late: map[int]int{9000: 1}}, Options{})
	if r.Verdict != OK || r.PathMTU != 9000 || r.Lost != 0 {
		t.Fatalf("late ack: %s %d, %d lost", r.Verdict, r.PathMTU, r.Lost)
	}
	if m.full != 0 {
		t.Fatalf("late ack: %d full rounds, want none (the late ack settles the top)", m.full)
	}
	r, _ = simulate(t, &pathModel{local: 9000, mtu: 3000, late: map[int]int{1500: 1}}, Options{})
	if r.Verdict != Blackhole || r.PathMTU != 3000 {
		t.Fatalf("late ack below a blackhole: %s %d", r.Verdict, r.PathMTU)
	}
}

// A peer that stalls (answers nothing for a while: an agent descheduled on
// a loaded machine) is not read as a blackhole: the re-check of a boundary
// carries a size known to pass, and a re-check whose control is not
// answered either proves nothing and is repeated.
func TestDecideStalledPeer(t *testing.T) {
	for _, c := range []struct {
		name  string
		mtu   int
		stall [2]float64
	}{
		// The first round sends 76, 1500 and 9000 at 0, 0.01 and 0.02.
		{"healthy, 0.3 s stall from the first round's top", 9000, [2]float64{0.015, 30}},
		{"healthy, 1.1 s stall from the first round's top", 9000, [2]float64{0.015, 110}},
		{"healthy, 0.3 s stall from the first probe after the start", 9000, [2]float64{0.025, 30}},
		{"blackhole, stall in the middle", 1500, [2]float64{2, 20}},
		{"blackhole at 4321, 1 s stall from the second round", 4321, [2]float64{1, 100}},
	} {
		r, m := simulate(t, &pathModel{local: 9000, mtu: c.mtu, stall: c.stall}, Options{})
		want := Blackhole
		if c.mtu == 9000 {
			want = OK
		}
		if r.Verdict != want || r.PathMTU != c.mtu {
			t.Errorf("%s: %s %d after %d rounds (%d full), want %s %d", c.name, r.Verdict, r.PathMTU, m.rounds, m.full, want, c.mtu)
		}
		t.Logf("%s: %d rounds, %d full, %d probes, %.2f s", c.name, m.rounds, m.full, m.probes, m.now/100)
	}
}

// The re-check sends more probes where more loss is seen, within bounds.
func TestVerifyTries(t *testing.T) {
	s := &search{opt: Options{Tries: 3}}
	if got := s.verifyTries(); got != 4 {
		t.Errorf("nothing seen: %d tries, want 4", got)
	}
	s.rtts = make([]time.Duration, 1000)
	if got := s.verifyTries(); got != 3 {
		t.Errorf("1000 answered, none lost: %d tries, want Tries (3)", got)
	}
	s.lost = 400
	if got := s.verifyTries(); got != maxTries {
		t.Errorf("29 %% lost: %d tries, want %d", got, maxTries)
	}
	s.opt.Tries = 12
	if got := s.verifyTries(); got != 12 {
		t.Errorf("Tries 12: %d tries", got)
	}
}

// A peer silent through the first window and the first patient round (a
// stall of about 1.4 s) is still measured: the second patient round is
// answered, the first round's sizes are asked again.
func TestDecideLongSilentStart(t *testing.T) {
	r, m := simulate(t, &pathModel{local: 9000, mtu: 9000, stall: [2]float64{0, 140}}, Options{})
	if r.Verdict != OK || r.PathMTU != 9000 {
		t.Fatalf("silent 1.4 s from the start: %s %d after %d rounds", r.Verdict, r.PathMTU, m.rounds)
	}
}

// A peer silent through every re-check of the boundary (longer than the
// search's patience: about 2.7 s) leaves a limit the search believes
// anyway; the result says it rests on silence (PeerSilent), so that the
// two-way test searches it again. A real limit's re-check hears its
// control, and is not marked.
func TestDecidePeerSilent(t *testing.T) {
	r, m := simulate(t, &pathModel{local: 9000, mtu: 9000, stall: [2]float64{0.015, 1000}}, Options{})
	if !r.PeerSilent || r.Verdict != Blackhole || !strings.Contains(r.Detail, "unproven") {
		t.Errorf("silent from the first round's top on: %s %d, peer silent %v (%s)", r.Verdict, r.PathMTU, r.PeerSilent, r.Detail)
	}
	t.Logf("silent from the first round's top: %s %d after %d rounds (%d full), %.2f s: %s", r.Verdict, r.PathMTU, m.rounds, m.full, m.now/100, r.Detail)
	for _, mtu := range []int{1500, 4321} {
		if r, _ := simulate(t, &pathModel{local: 9000, mtu: mtu}, Options{}); r.PeerSilent || r.Verdict != Blackhole {
			t.Errorf("blackhole at %d: %s %d, peer silent %v", mtu, r.Verdict, r.PathMTU, r.PeerSilent)
		}
	}
}
