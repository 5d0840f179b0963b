package traffic

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestFlowTruesize: the estimate is at least what the kernel charged on
// veth for each case measured (flow.go), and the window of a 4 MiB buffer
// (8 MiB as the kernel has it) holds at most half of it at those charges.
func TestFlowTruesize(t *testing.T) {
	for _, c := range []struct{ size, mtu, measured int }{
		{88, 9000, 920}, {1400, 9000, 2304}, {8192, 9000, 16640}, {8192, 1500, 13824}, {88, 0, 920},
	} {
		est := datagramTruesize(c.size, c.mtu)
		w := flowWindow(8<<20, c.size, c.mtu)
		if est < c.measured || w*c.measured > 4<<20 || w < 1 {
			t.Errorf("%d bytes at MTU %d: estimate %d (measured %d), window %d", c.size, c.mtu, est, c.measured, w)
		}
	}
	if w := flowWindow(0, 65507, 1500); w != 1 {
		t.Errorf("no buffer: window %d, want 1", w)
	}
}

// TestFlowWindowNeverExceeded drives a sender and a receiver in simulated
// time, counting datagrams: the receiver reads at random (sometimes not at
// all, as when it is off its CPU), a third of its feedback is lost and
// some arrives out of order. The receiver's queue never holds more than
// the window plus the probes allowed between two feedbacks, whatever the
// timing.
func TestFlowWindowNeverExceeded(t *testing.T) {
	const window = 100
	budget := max(1, window/8)
	rng := rand.New(rand.NewPCG(27, 9000))
	now := time.Unix(1000, 0)
	fs := newFlowSender(now, window/4)
	fr := flowReceiver{window: window, last: now}
	var seq, read uint64
	var wire []uint64 // feedback on its way: high marks
	for step := 0; step < 300000; step++ {
		now = now.Add(time.Duration(rng.IntN(50)) * time.Microsecond)
		if c := fs.credit(seq); c > 0 {
			seq += uint64(min(c, 1+rng.IntN(64)))
			fs.sent(seq)
		} else {
			fs.stalled(now)
		}
		if q := seq - read; q > window+uint64(budget) {
			t.Fatalf("step %d: %d datagrams queued at the receiver, window %d + %d probes", step, q, window, budget)
		}
		if rng.IntN(10) > 0 {
			k := min(seq-read, uint64(rng.IntN(80)))
			read += k
			fr.unsent += int(k)
			if fr.due(now, read == seq) {
				fr.last, fr.unsent = now, 0
				if rng.IntN(3) > 0 {
					wire = append(wire, read)
				}
			}
		}
		if len(wire) > 0 && rng.IntN(4) > 0 {
			i := 0
			if len(wire) > 1 && rng.IntN(5) == 0 {
				i = 1 // the newer one first
			}
			fs.feedback(wire[i], window, now)
			wire = append(wire[:i], wire[i+1:]...)
		}
	}
	st := fs.st
	t.Logf("sent %d, read %d, %+v", seq, read, st)
	if st.MaxInFlight > window+int64(budget) || st.MaxInFlight < window || st.Probes == 0 || st.Abandoned != "" || read < seq/2 {
		t.Errorf("sent %d read %d: %+v", seq, read, st)
	}
}

// TestFlowFeedbackLost: without feedback the sender probes at most its
// budget, each after probeAfter of silence, and gives flow control up
// flowGiveUp after the last feedback (at the start, when the receiver
// never answers): it never waits longer than that in all.
func TestFlowFeedbackLost(t *testing.T) {
	for _, heardFirst := range []bool{false, true} {
		t0 := time.Unix(1000, 0)
		fs := newFlowSender(t0, 64)
		now := t0
		var seq uint64
		if heardFirst {
			now = now.Add(time.Second)
			fs.feedback(0, 64, now)
		}
		from := now
		probes := 0
		for steps := 0; fs.credit(seq) != math.MaxInt; steps++ {
			if steps > 10000 {
				t.Fatal("the sender waits for ever")
			}
			if c := fs.credit(seq); c > 0 {
				if seq >= 64 {
					probes++
				}
				seq += uint64(c)
				fs.sent(seq)
				continue
			}
			wait := fs.stalled(now)
			now = now.Add(wait)
		}
		waited := now.Sub(from)
		t.Logf("heard first %v: gave up after %v, %d probes: %s", heardFirst, waited, probes, fs.st.Abandoned)
		if waited != flowGiveUp || probes != 8 || fs.st.Probes != 8 || fs.st.MaxInFlight != 64+8 {
			t.Errorf("gave up after %v with %d probes (stats %+v), want %v and 8", waited, probes, fs.st, flowGiveUp)
		}
		if want := map[bool]string{false: "no feedback from the receiver within", true: "feedback stopped"}[heardFirst]; !strings.Contains(fs.st.Abandoned, want) {
			t.Errorf("abandoned: %q, want it to say %q", fs.st.Abandoned, want)
		}
	}
}

// TestFlowProbeRecovers: a feedback lost after the receiver had read
// everything costs the sender one probeAfter: the probe makes the receiver
// answer again.
func TestFlowProbeRecovers(t *testing.T) {
	now := time.Unix(1000, 0)
	fs := newFlowSender(now, 64)
	fr := flowReceiver{window: 64, last: now}
	seq := uint64(64)
	fs.sent(seq)
	fr.unsent = 64
	if !fr.due(now, true) {
		t.Fatal("a receiver that drained its queue owes feedback")
	}
	fr.last, fr.unsent = now, 0 // ... and that feedback is lost
	wait := fs.stalled(now)
	if fs.credit(seq) != 0 || wait != probeAfter {
		t.Fatalf("full window: credit %d, wait %v", fs.credit(seq), wait)
	}
	now = now.Add(wait)
	if fs.stalled(now) != 0 || fs.credit(seq) != 1 {
		t.Fatalf("after %v: no probe (credit %d)", probeAfter, fs.credit(seq))
	}
	seq++
	fs.sent(seq)
	fr.unsent++
	if !fr.due(now, true) {
		t.Fatal("the probe got no answer")
	}
	fs.feedback(seq, 64, now)
	if fs.credit(seq) != 64 {
		t.Errorf("after the answer: credit %d, want the window", fs.credit(seq))
	}
	// Feedback only after data: a receiver with nothing new stays silent.
	fr.last, fr.unsent = now, 0
	if fr.due(now.Add(time.Second), true) {
		t.Error("feedback without data received since the last")
	}
}

func TestSummarizeFlow(t *testing.T) {
	snd := &Side{Role: RoleSender, Duration: time.Second, UDP: &UDPStats{Sent: 10,
		Flow: &FlowStats{Window: 252, Feedback: 9, WaitNs: int64(300 * time.Millisecond)}}}
	rcv := &Side{Role: RoleReceiver, Duration: time.Second, UDP: &UDPStats{Received: 10, ReceiveBufferBytes: 8 << 20}}
	f := summarizeFlow(snd, rcv)
	if f == nil || f.Bottleneck != BottleneckReceiver || f.WaitPercent != 30 || f.ReceiveBufferBytes != 8<<20 || f.Window != 252 {
		t.Errorf("waited 30 %%: %+v", f)
	}
	snd.UDP.Flow.WaitNs = int64(20 * time.Millisecond)
	if f := summarizeFlow(snd, rcv); f.Bottleneck != BottleneckSender {
		t.Errorf("waited 2 %%: %+v", f)
	}
	snd.UDP.Flow.Abandoned = "silent"
	if f := summarizeFlow(snd, rcv); f.Bottleneck != "" || f.Abandoned != "silent" {
		t.Errorf("abandoned: %+v", f)
	}
	snd.UDP.Flow = nil
	if f := summarizeFlow(snd, rcv); f != nil {
		t.Errorf("no flow control: %+v", f)
	}
}
