package traffic

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestSeqTracker(t *testing.T) {
	var tr seqTracker
	for _, s := range []uint64{0, 1, 2, 5, 3, 3, 4, 9, 1, 10} {
		tr.add(s)
	}
	// 0..5 all seen once (3 arrived late, then again), 9 and 10 seen, 6..8 missing.
	if tr.unique != 8 || tr.duplicates != 2 || tr.reordered != 2 || tr.lost() != 3 || tr.next != 11 {
		t.Errorf("tracker = unique %d dup %d reordered %d lost %d next %d", tr.unique, tr.duplicates, tr.reordered, tr.lost(), tr.next)
	}
	// A jump beyond the window, then a very old one (counted late, not dup).
	tr.add(10 + 3*seqWindow)
	tr.add(7)
	if tr.lost() != uint64(3*seqWindow-1+3-1) || tr.reordered != 3 {
		t.Errorf("after jump: lost %d reordered %d", tr.lost(), tr.reordered)
	}
	// The window must not remember numbers one window older as seen.
	var w seqTracker
	w.add(0)
	w.add(seqWindow) // clears nothing that matters, sets slot 0 again
	w.add(seqWindow + 1)
	w.add(1) // too old? no: exactly one window back from next -> late
	if w.duplicates != 0 {
		t.Errorf("old number taken for a duplicate: %+v", w.duplicates)
	}
}

func TestJitterRFC3550(t *testing.T) {
	var j jitter
	// Constant transit: no jitter.
	for i := int64(0); i < 100; i++ {
		j.add(i*1000, i*1000+500)
	}
	if j.ns() != 0 {
		t.Errorf("constant transit: jitter %d", j.ns())
	}
	// Transit alternating by 160 ns: |D| = 160 each time, J converges to 160.
	var k jitter
	for i := int64(0); i < 1000; i++ {
		k.add(i*1000, i*1000+500+160*(i%2))
	}
	if math.Abs(float64(k.ns())-160) > 1 {
		t.Errorf("alternating transit: jitter %d, want 160", k.ns())
	}
}

func TestPacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// 8 Mbit/s of 1000-byte messages = 1000/s, one per ms.
	p := newPacer(t0, 8e6, 1000, 5)
	total := 0
	for ms := 0; ms < 1000; ms++ {
		n, _ := p.due(t0.Add(time.Duration(ms)*time.Millisecond), 64)
		total += n
	}
	if total != 1000 {
		t.Errorf("released %d in 1 s, want 1000", total)
	}
	// Nothing due right after: wait about 1 ms.
	n, wait := p.due(t0.Add(999*time.Millisecond+100*time.Microsecond), 64)
	if n != 0 || wait < 800*time.Microsecond || wait > time.Millisecond {
		t.Errorf("n %d wait %v", n, wait)
	}
	// A 100 ms stall forgives all but depth (5) messages.
	n, _ = p.due(t0.Add(1100*time.Millisecond), 64)
	if n != 5 {
		t.Errorf("after a stall released %d, want depth 5", n)
	}
	// It skipped the other 96 of the 101 messages due by then, and says so.
	if p.late != 96e6 {
		t.Errorf("late %v after a 100 ms stall, want 96ms", time.Duration(p.late))
	}
	// max caps a batch.
	q := newPacer(t0, 8e6, 1000, 100)
	if n, _ := q.due(t0.Add(50*time.Millisecond), 10); n != 10 {
		t.Errorf("batch cap: %d", n)
	}
}

// TestRatePacer: the blocks mode's paced requests go one per 1/rate, at
// most one at a time, and a requester that fell behind resumes from now
// without a burst; no rate lets everything go.
func TestRatePacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newRatePacer(t0, 100) // one per 10 ms
	sent := 0
	for us := 0; us < 1_000_000; us += 500 {
		if p.take(t0.Add(time.Duration(us) * time.Microsecond)) {
			sent++
		}
	}
	if sent != 100 {
		t.Errorf("released %d in 1 s at 100/s", sent)
	}
	if due := p.nextDue(); !due.Equal(t0.Add(time.Second)) {
		t.Errorf("next due at %v after the start", due.Sub(t0))
	}
	// 55 ms late: one goes now, the next 10 ms later, not five at once.
	late := t0.Add(time.Second + 55*time.Millisecond)
	if !p.take(late) || p.take(late) || !p.nextDue().Equal(late.Add(10*time.Millisecond)) {
		t.Errorf("after a stall: next due %v after it", p.nextDue().Sub(late))
	}
	none := newRatePacer(t0, 0)
	if none != nil || !none.take(t0) || !none.take(t0) || !none.nextDue().IsZero() {
		t.Error("no rate: every request should go at once")
	}
}

func TestWireFormulas(t *testing.T) {
	for _, c := range []struct{ n, mtu, want int }{
		{8192, 1500, 6}, {8192, 9000, 1}, {32768, 9000, 4}, {1472, 1500, 1}, {1473, 1500, 2}, {8972, 9000, 1}, {8973, 9000, 2},
	} {
		if got := PacketsPerDatagram(c.n, c.mtu); got != c.want {
			t.Errorf("PacketsPerDatagram(%d, %d) = %d, want %d", c.n, c.mtu, got, c.want)
		}
	}
	// 1448/1538 = 94.1 % at 1500, 8948/9038 = 99.0 % at 9000 (docs/sources.md).
	if e := TCPWireEfficiency(1500, EthernetOverhead); math.Abs(e-0.9415) > 0.0005 {
		t.Errorf("TCP 1500: %.4f", e)
	}
	if e := TCPWireEfficiency(9000, EthernetOverhead); math.Abs(e-0.9900) > 0.0005 {
		t.Errorf("TCP 9000: %.4f", e)
	}
	// 1472-byte datagrams at 1500: 1472/1538.
	if e := UDPWireEfficiency(1472, 1500, EthernetOverhead); math.Abs(e-1472.0/1538) > 1e-9 {
		t.Errorf("UDP 1472: %.4f", e)
	}
	// 8 KiB at 1500: 8200 bytes of IP payload in 6 fragments, 6 x (20+38) more.
	if e := UDPWireEfficiency(8192, 1500, EthernetOverhead); math.Abs(e-8192.0/(8200+6*58)) > 1e-9 {
		t.Errorf("UDP 8K/1500: %.4f", e)
	}
	// 64-byte datagrams hit the minimum frame: 92-byte packet, 110 on the wire.
	if e := UDPWireEfficiency(64, 1500, EthernetOverhead); math.Abs(e-64.0/(92+38)) > 1e-9 {
		t.Errorf("UDP 64: %.4f", e)
	}
	if e := UDPWireEfficiency(18, 1500, EthernetOverhead); math.Abs(e-18.0/(64+20)) > 1e-9 {
		t.Errorf("UDP 18 (min frame): %.4f", e)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	b := make([]byte, HeaderLen)
	in := Header{Kind: KindResponse, Chunk: 3, Seq: 1<<40 + 7, Stamp: -5, Size: 1 << 20, Chunks: 17, Flags: FlagHeld, Held: 0xdeadbeef}
	in.Put(b)
	var out Header
	if err := out.Parse(b); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	b[0] ^= 1
	if out.Parse(b) == nil {
		t.Error("bad magic accepted")
	}
	if out.Parse(b[:HeaderLen-1]) == nil {
		t.Error("short datagram accepted")
	}
}

func FuzzHeaderParse(f *testing.F) {
	b := make([]byte, HeaderLen)
	(&Header{Kind: KindData, Seq: 1}).Put(b)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if h.Parse(b) == nil {
			c := make([]byte, HeaderLen)
			h.Put(c)
			var g Header
			if g.Parse(c) != nil || g != h {
				t.Fatalf("re-encode differs: %+v %+v", h, g)
			}
		}
	})
}

func TestChunking(t *testing.T) {
	for _, c := range []struct{ size, n int }{{8192, 1}, {MaxDatagram, 1}, {MaxDatagram + 1, 2}, {1 << 20, 17}} {
		n, sizes := chunking(c.size, 0)
		sum := 0
		for _, s := range sizes {
			sum += s
			if s > MaxDatagram || s < HeaderLen {
				t.Errorf("chunk of %d bytes", s)
			}
		}
		if n != c.n || sum != c.size {
			t.Errorf("chunking(%d) = %d chunks summing to %d", c.size, n, sum)
		}
	}
}

func TestSpecNormalize(t *testing.T) {
	s, err := Spec{Mode: ModeUDP}.Normalize()
	if err != nil || s.Duration != 10*time.Second || s.RateBitsPerSec != 1e9 || s.Len != 8192 || s.LinkOverheadBytes != 38 {
		t.Errorf("udp defaults: %+v %v", s, err)
	}
	s, err = Spec{Mode: ModeUDP, RateSet: true}.Normalize()
	if err != nil || s.Paced() {
		t.Errorf("--rate 0 should be unpaced: %+v %v", s, err)
	}
	s, err = Spec{Mode: ModeBlocks}.Normalize()
	if err != nil || s.Request != 256 || s.Block != 8192 || s.Outstanding != 1 {
		t.Errorf("blocks defaults: %+v %v", s, err)
	}
	cpu := -1
	for _, bad := range []Spec{
		{Mode: "ping"}, {Mode: ModeTCP, Duration: 2 * time.Hour}, {Mode: ModeTCP, Interval: time.Millisecond},
		{Mode: ModeUDP, Len: 10}, {Mode: ModeUDP, Len: 70000}, {Mode: ModeBlocks, Block: 2 << 20},
		{Mode: ModeBlocks, Outstanding: 5000}, {Mode: ModeTCP, Parallel: 1000}, {Mode: ModeTCP, CPU: &cpu},
		{Mode: ModeBlocks, RequestsPerSec: -1}, {Mode: ModeBlocks, RequestsPerSec: 1e9}, {Mode: ModeUDP, RequestsPerSec: 10},
	} {
		if _, err := bad.Normalize(); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: err %v, want ErrSpec", bad, err)
		}
	}
}

func TestSummarizeUDPLoss(t *testing.T) {
	spec, _ := Spec{Mode: ModeUDP, Len: 8192, LinkRateBitsPerSec: 1e9}.Normalize()
	snd := &Side{Role: RoleSender, Duration: time.Second, Messages: 1000, UDP: &UDPStats{Sent: 1000},
		MTU: 1500, Counters: Counters{IPOutRequests: 1040, TCPOutSegs: 40, UDPOutDatagrams: 1000, FragOKs: 1000, FragCreates: 6000, UDPSndbufErrors: 30}}
	rcv := &Side{Role: RoleReceiver, Duration: time.Second, Messages: 900, Bytes: 900 * 8192,
		UDP: &UDPStats{Received: 900}, Counters: Counters{UDPRcvbufErrors: 20, ReasmFails: 500},
		CPU: CPU{UserNs: 1000, SystemNs: 8000, SoftIRQNs: 9000}}
	f := Summarize(spec, Forward, snd, rcv)
	s := f.Summary
	if s.Lost != 100 || s.LossPercent != 10 {
		t.Errorf("lost %d (%.1f%%)", s.Lost, s.LossPercent)
	}
	// 30 at the sender's queue, 20 in the socket buffer, ReasmFails (500
	// fragments) capped at the 50 left, nothing for the network.
	if *s.LossBy != (LossPlaces{SenderQueue: 30, SocketBuffer: 20, Reassembly: 50}) {
		t.Errorf("places %+v", *s.LossBy)
	}
	// The 40 TCP segments of the control session are not the test's packets.
	if s.FragmentsPerMessage != 6 {
		t.Errorf("fragments per message %.2f", s.FragmentsPerMessage)
	}
	if s.ServerCost.CPUNsPerMsg != 10 || s.ServerCost.SoftIRQNsPerMsg != 10 {
		t.Errorf("server cost %+v", s.ServerCost)
	}
	want := UDPWireEfficiency(8192, 1500, 38) * 1e9
	if math.Abs(s.WireLimitBitsPerSec-want) > 1 || math.Abs(s.PercentOfWireLimit-100*900*8192*8/want) > 1e-6 {
		t.Errorf("wire limit %.0f (%.2f%%)", s.WireLimitBitsPerSec, s.PercentOfWireLimit)
	}
}
