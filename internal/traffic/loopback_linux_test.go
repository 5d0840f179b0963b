package traffic

import (
	"context"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var lo = Place{Addr: netip.MustParseAddr("127.0.0.1")}

func runLo(t *testing.T, ctx context.Context, spec Spec) *Result {
	t.Helper()
	return runAt(t, ctx, spec, lo)
}

// runAt runs both ends of spec at p, failing the test on a side's error.
func runAt(t *testing.T, ctx context.Context, spec Spec, p Place) *Result {
	t.Helper()
	res, err := RunLocal(ctx, spec, p, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Flows {
		for _, sd := range []*Side{f.Client, f.Server} {
			if sd == nil {
				t.Fatalf("flow %s: missing side", f.Direction)
			}
			if sd.Error != "" && ctx.Err() == nil {
				t.Errorf("flow %s %s: %s", f.Direction, sd.Role, sd.Error)
			}
		}
	}
	return res
}

// The loopback tests that assert no rate or timing threshold run in
// parallel (after the serial ones): each waits out its run's duration.

// TestLoopbackTCP is serial: a TCP end's intervals are cut by a goroutine
// that needs a P, which the hot threads of parallel runs hold.
func TestLoopbackTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TCP intervals cut against the clock, serial, 0.6 s")
	}
	res := runLo(t, context.Background(), Spec{Mode: ModeTCP, Duration: 600 * time.Millisecond, Interval: 150 * time.Millisecond, Parallel: 2})
	f := res.Flows[0]
	s := f.Summary
	t.Logf("tcp: %.2f Gbit/s, retrans %d, client %+v", s.BitsPerSec/1e9, s.Retransmits, f.Client.CPU)
	if s.Bytes <= 0 || s.Bytes != f.Client.Bytes {
		t.Errorf("receiver got %d bytes, sender wrote %d", s.Bytes, f.Client.Bytes)
	}
	if len(f.Client.Streams) != 2 || f.Client.Streams[0].RTT <= 0 || f.Client.Streams[0].MSS <= 0 {
		t.Errorf("streams = %+v", f.Client.Streams)
	}
	checkCut(t, "sender", f.Client.Intervals, 150*time.Millisecond)
	if f.Client.CPU.UserNs+f.Client.CPU.SystemNs <= 0 || s.ClientCost.CPUNsPerGiB <= 0 {
		t.Errorf("no CPU: %+v %+v", f.Client.CPU, s.ClientCost)
	}
}

// checkCut holds an end's intervals to its own clock, not to the wall's:
// there is at least one; they follow each other from the end's start;
// and each but the last was cut only when due, at or after the next
// multiple of every (a cutter woken late on a loaded machine makes fewer,
// longer intervals, never more).
func checkCut(t *testing.T, end string, ivs []Interval, every time.Duration) {
	t.Helper()
	if len(ivs) == 0 {
		t.Errorf("%s: no intervals", end)
		return
	}
	var prev time.Duration
	for i, in := range ivs {
		if in.Start != prev || in.End < in.Start {
			t.Errorf("%s: interval %d is %v-%v after one ending at %v", end, i, in.Start, in.End, prev)
		}
		if i < len(ivs)-1 && in.End/every <= in.Start/every {
			t.Errorf("%s: interval %d (%v-%v) was cut before it was due (every %v)", end, i, in.Start, in.End, every)
		}
		prev = in.End
	}
}

func TestLoopbackTCPBidir(t *testing.T) {
	t.Parallel()
	res := runLo(t, context.Background(), Spec{Mode: ModeTCP, Duration: 200 * time.Millisecond, Bidir: true})
	if len(res.Flows) != 2 || res.Flows[1].Direction != Reverse || res.Flows[1].Server.Role != RoleSender || res.Flows[1].Summary.Bytes == 0 {
		t.Fatalf("flows = %+v", res.Flows)
	}
}

// TestLoopbackUDPPaced holds the pacer's rate: serial and a whole second,
// so that a scheduling delay weighs less.
func TestLoopbackUDPPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the pacer held to its rate for 1 s")
	}
	const rate = 100e6
	res := runLo(t, context.Background(), Spec{Mode: ModeUDP, Duration: time.Second, RateBitsPerSec: rate, Len: 1400})
	s := res.Flows[0].Summary
	t.Logf("udp: %.1f Mbit/s sent %d lost %d jitter %dns", s.BitsPerSec/1e6, s.Sent, s.Lost, s.Jitter)
	checkPaced(t, res, res.Flows[0].Client, rate)
	if s.Sent == 0 || s.Messages+s.Lost != s.Sent {
		t.Errorf("sent %d, delivered %d, lost %d: do not add up", s.Sent, s.Messages, s.Lost)
	}
	if s.LossBy == nil || s.LossBy.Network+s.LossBy.SocketBuffer+s.LossBy.Reassembly+s.LossBy.SenderQueue != s.Lost {
		t.Errorf("loss places %+v do not add up to %d", s.LossBy, s.Lost)
	}
}

// checkPaced holds a paced sender to its schedule. It is never ahead of
// it (at most 2 % over: the last message's rounding). What it sent is the
// schedule less what it says it skipped for being late (UDPStats.LateNs, a
// thread not given a CPU: other tests on a 2-core machine took a sender's
// 100 Mbit/s to 83): 3 % under at most, the backlog of up to 10 ms it may
// not have caught up when the run ended. And the result is limited by
// sender-late exactly when it was late for more than lateShare (5 %), so
// a sender that kept up was within 8 % of the rate.
func checkPaced(t *testing.T, res *Result, sender *Side, rate float64) {
	t.Helper()
	d := sender.Duration
	got := float64(sender.Bytes) * 8 / d.Seconds()
	late := float64(sender.UDP.LateNs) / float64(d)
	want := rate * (1 - late)
	t.Logf("sender: %.1f Mbit/s in %v, %v late (%.1f %%): its schedule less that is %.1f Mbit/s; limited by %+v",
		got/1e6, d, time.Duration(sender.UDP.LateNs), 100*late, want/1e6, res.LimitedBy)
	if got > rate*1.02 || got > want+0.02*rate || got < want-0.03*rate {
		t.Errorf("sender %.1f Mbit/s, want %.1f (%.1f less %.1f %% late): 2 %% over, 3 %% under at most", got/1e6, want/1e6, rate/1e6, 100*late)
	}
	if limited := hasLimit(res.LimitedBy, LimitSenderLate); limited != (late > lateShare) {
		t.Errorf("%.1f %% late, limited by %+v", 100*late, res.LimitedBy)
	}
}

func hasLimit(ls []Limit, name string) bool {
	for _, l := range ls {
		if l.Limit == name {
			return true
		}
	}
	return false
}

func TestLoopbackUDPReverse(t *testing.T) {
	t.Parallel()
	res := runLo(t, context.Background(), Spec{Mode: ModeUDP, Duration: 200 * time.Millisecond, RateBitsPerSec: 10e6, Reverse: true})
	f := res.Flows[0]
	if f.Direction != Reverse || f.Server.Role != RoleSender || f.Client.UDP.Received == 0 {
		t.Fatalf("reverse flow = %+v / %+v", f.Client, f.Server)
	}
}

func TestLoopbackBlocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		block, outstanding, chunks int
	}{{8 << 10, 1, 1}, {8 << 10, 8, 1}, {1 << 20, 2, 17}} {
		res := runLo(t, context.Background(), Spec{Mode: ModeBlocks, Duration: 200 * time.Millisecond, Block: tc.block, Outstanding: tc.outstanding})
		f := res.Flows[0]
		s := f.Summary
		if s.RTT == nil || s.Messages == 0 {
			t.Fatalf("block %d: no blocks: %+v", tc.block, f.Client.Blocks)
		}
		t.Logf("blocks %d x%d: %.0f/s p50 %v p99 %v lost %d", tc.block, tc.outstanding, s.PerSec, time.Duration(s.RTT.P50), time.Duration(s.RTT.P99), s.Lost)
		if s.Chunks != tc.chunks {
			t.Errorf("block %d: %d chunks, want %d", tc.block, s.Chunks, tc.chunks)
		}
		if f.Server.Blocks.Completed < s.Messages {
			t.Errorf("responder answered %d, requester completed %d", f.Server.Blocks.Completed, s.Messages)
		}
		if s.RTT.P50 > s.RTT.P99 || s.RTT.P99 > s.RTT.Max || s.RTT.Min > s.RTT.P50 {
			t.Errorf("percentiles out of order: %+v", s.RTT)
		}
		if got := s.ClientCost.CPUNsPerMsg * float64(s.Messages); got < 0.99*float64(s.ClientCost.CPUNs) || got > 1.01*float64(s.ClientCost.CPUNs) {
			t.Errorf("per-block CPU %f x %d != total %d", s.ClientCost.CPUNsPerMsg, s.Messages, s.ClientCost.CPUNs)
		}
	}
}

// TestLoopbackCancel cancels a 30 s run of each mode once its client has
// closed two intervals, the three at once: each stops at its cancel, with
// what it did until then, short of its 30 s.
func TestLoopbackCancel(t *testing.T) {
	t.Parallel()
	modes := []Mode{ModeTCP, ModeUDP, ModeBlocks}
	type run struct {
		res *Result
		err error
	}
	runs := make([]run, len(modes))
	var wg sync.WaitGroup
	for i, mode := range modes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var closed atomic.Int32
			obs := func(d Direction, r Role, _ Interval) {
				if d == Forward && (r == RoleSender || r == RoleRequester) && closed.Add(1) == 2 {
					cancel()
				}
			}
			runs[i].res, runs[i].err = RunLocal(ctx, Spec{Mode: mode, Duration: 30 * time.Second, RateBitsPerSec: 50e6, Interval: 100 * time.Millisecond}, lo, lo, obs)
		}()
	}
	wg.Wait()
	for i, mode := range modes {
		r := runs[i]
		if r.err != nil {
			t.Errorf("%s: %v", mode, r.err)
			continue
		}
		f := r.res.Flows[0]
		if f.Client.Error != "cancelled" || f.Client.Bytes == 0 || len(f.Client.Intervals) < 2 || f.Client.Duration >= r.res.Spec.Duration {
			t.Errorf("%s: after cancel: error %q, %d bytes, %d intervals, ran %v of %v", mode, f.Client.Error, f.Client.Bytes, len(f.Client.Intervals), f.Client.Duration, r.res.Spec.Duration)
		}
	}
}

func TestLoopbackPinned(t *testing.T) {
	t.Parallel()
	c0, c1 := 0, runtime.NumCPU()-1
	res := runLo(t, context.Background(), Spec{Mode: ModeBlocks, Duration: 300 * time.Millisecond, CPU: &c0, PeerCPU: &c1})
	f := res.Flows[0]
	if f.Client.CPU.Pinned == nil || *f.Client.CPU.Pinned != c0 || f.Server.CPU.Pinned == nil || *f.Server.CPU.Pinned != c1 || f.Summary.Messages == 0 {
		t.Errorf("pinned run: client %+v server %+v, %d blocks", f.Client.CPU, f.Server.CPU, f.Summary.Messages)
	}
	// A CPU this machine does not have is an error the side reports. Its
	// peer would wait its startup timeout (5 s) for the first datagram:
	// the run is cancelled long before that.
	bad := 1000
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := RunLocal(ctx, Spec{Mode: ModeUDP, Duration: 200 * time.Millisecond, CPU: &bad}, lo, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Flows[0].Client.Error; !strings.Contains(e, "pin to cpu 1000") {
		t.Errorf("pinning to cpu 1000: error %q", e)
	}
}

func TestLoopbackUDPUnpacedGSO(t *testing.T) {
	t.Parallel()
	res := runLo(t, context.Background(), Spec{Mode: ModeUDP, Duration: 200 * time.Millisecond, RateSet: true, Len: 64})
	f := res.Flows[0]
	s := f.Summary
	t.Logf("64 B unpaced: %.0f datagrams/s sent %d lost %d gso %d", s.PerSec, s.Sent, s.Lost, f.Client.UDP.GSO)
	if f.Client.UDP.GSO < 2 || s.FragmentsPerMessage != 1 || s.PacketsPerMessage != 0 {
		t.Errorf("gso %d, fragments %.2f, packets %.2f", f.Client.UDP.GSO, s.FragmentsPerMessage, s.PacketsPerMessage)
	}
	if s.Sent == 0 || s.Messages+s.Lost != s.Sent || f.Server.UDP.Duplicates != 0 {
		t.Errorf("sent %d delivered %d lost %d dup %d", s.Sent, s.Messages, s.Lost, f.Server.UDP.Duplicates)
	}
}
