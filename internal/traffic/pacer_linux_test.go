package traffic

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"
)

// stallGuard holds its sender's sends for stall every period (a sender
// whose thread lost its CPU, deterministically).
type stallGuard struct {
	stall, period time.Duration
	last          time.Time
}

func (g *stallGuard) Overhead() int     { return 0 }
func (g *stallGuard) Seal([]byte) error { return nil }
func (g *stallGuard) Open([]byte) error { return nil }
func (g *stallGuard) Hello([]byte) bool { return false }
func (g *stallGuard) Wait(ctx context.Context, _ int) error {
	if now := time.Now(); now.Sub(g.last) >= g.period {
		g.last = now
		time.Sleep(g.stall)
	}
	return nil
}

// TestPacedSenderLate: a paced sender held 40 ms every 100 ms skips the
// schedule it missed beyond its 10 ms of catch-up, says how much
// (UDPStats.LateNs), and the result is limited by it; what it sent is its
// schedule less that (checkPaced). One that is not held is not late. Half
// a second is enough: 5 stalls make 30 % of it late, far past lateShare.
func TestPacedSenderLate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a paced sender held against the clock, 1.4 s")
	}
	const rate = 100e6
	for _, c := range []struct {
		name  string
		guard Guard
		late  bool
	}{{"held", &stallGuard{stall: 40 * time.Millisecond, period: 100 * time.Millisecond}, true}, {"free", nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			spec := Spec{Mode: ModeUDP, Duration: 500 * time.Millisecond, RateBitsPerSec: rate, Len: 1400}
			send, recv := connectedPair(t)
			var ss, rs *Side
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); rs = ReceiveUDP(context.Background(), spec, recv, Options{}) }()
			go func() { defer wg.Done(); ss = SendUDP(context.Background(), spec, send, Options{Guard: c.guard}) }()
			wg.Wait()
			if ss.Error != "" || rs.Error != "" {
				t.Fatalf("sender %q, receiver %q", ss.Error, rs.Error)
			}
			res := &Result{Spec: spec, Flows: []Flow{Summarize(spec, Forward, ss, rs)}}
			collectLimits(res)
			res.Judge()
			checkPaced(t, res, ss, rate)
			// 5 stalls of 40 ms, each less the 10 ms caught up: 150 ms, and
			// what this busy machine adds.
			late := time.Duration(ss.UDP.LateNs)
			if c.late && (late < 100*time.Millisecond || late > 400*time.Millisecond || res.Verdict != VerdictLimited) {
				t.Errorf("held 5 x 40 ms: %v late, verdict %s", late, res.Verdict)
			}
			if !c.late && hasLimit(res.LimitedBy, LimitSenderLate) {
				t.Logf("a free sender ran late on this busy machine: %v", late)
			}
		})
	}
}

// TestLateLimit: the sender-late limit past lateShare of the run, with how
// late; at the agent, not when its rate limit held the sender (that is
// why it was late, and that limit says so).
func TestLateLimit(t *testing.T) {
	if l := lateLimit(50*time.Millisecond, time.Second); l != nil {
		t.Errorf("5 %% late: %+v", l)
	}
	l := lateLimit(150*time.Millisecond, time.Second)
	if l == nil || l.Limit != LimitSenderLate || l.HeldNs != int64(150*time.Millisecond) {
		t.Fatalf("15 %% late: %+v", l)
	}
	if lateLimit(time.Millisecond, 0) != nil {
		t.Error("a run of no duration was late")
	}
	own := []Limit{*l}
	if got := withSessionLimits(own, nil); len(got) != 1 || got[0].Limit != LimitSenderLate {
		t.Errorf("no session limit: %+v", got)
	}
	rateHeld := []Limit{{Limit: LimitAgentRate}}
	if got := withSessionLimits(own, rateHeld); len(got) != 1 || got[0].Limit != LimitAgentRate {
		t.Errorf("held by the agent's rate: %+v", got)
	}
	cut := []Limit{{Limit: LimitAgentDuration}}
	if got := withSessionLimits(own, cut); len(got) != 2 {
		t.Errorf("cut by the session's length: %+v", got)
	}
}

// TestLabUDPPaced: 200 Mbit/s between two lab nodes, on schedule
// (checkPaced), arrives whole and at the rate it was sent.
func TestLabUDPPaced(t *testing.T) {
	l := upPair(t, "t5-paced", 9000, "")
	const rate = 200e6
	f := runLab(t, context.Background(), Spec{Mode: ModeUDP, Duration: 2 * time.Second, RateBitsPerSec: rate, Len: 8 << 10},
		place(t, l, "node1"), place(t, l, "node2"))
	s := f.Summary
	sent := float64(f.Client.Bytes) * 8 / f.Client.Duration.Seconds()
	t.Logf("sent %.1f Mbit/s, received %.1f Mbit/s, lost %d of %d, jitter %v", sent/1e6, s.BitsPerSec/1e6, s.Lost, s.Sent, time.Duration(s.Jitter))
	res := &Result{Flows: []Flow{f}}
	collectLimits(res)
	checkPaced(t, res, f.Client, rate)
	// Unshaped: what was sent arrives, at the rate it was sent.
	if math.Abs(s.BitsPerSec-sent) > 0.02*rate {
		t.Errorf("received %.1f Mbit/s of %.1f sent", s.BitsPerSec/1e6, sent/1e6)
	}
	if s.Lost != 0 || s.Jitter <= 0 {
		t.Errorf("unshaped 200 Mbit/s: lost %d, jitter %d", s.Lost, s.Jitter)
	}
}
