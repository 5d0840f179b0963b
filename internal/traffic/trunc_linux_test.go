package traffic

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/kernel"
)

// forceGSO makes this process's UDP GSO probe answer probe until the test
// ends (it is asked once per process otherwise).
func forceGSO(t *testing.T, probe func() error) {
	t.Helper()
	old := gsoProbe
	reset := func() {
		gsoOnce.Once = sync.Once{}
		gsoOnce.err = nil
	}
	gsoProbe = probe
	reset()
	t.Cleanup(func() { gsoProbe = old; reset() })
}

// oldKernelSilence makes senders believe in UDP GSO while the kernel
// ignores the control message, as a kernel before 4.18 does (see gsoLevel).
func oldKernelSilence(t *testing.T) {
	t.Helper()
	forceGSO(t, func() error { return nil })
	gsoLevel = unix.IPPROTO_TCP
	t.Cleanup(func() { gsoLevel = unix.SOL_UDP })
}

func absentGSO() error { return unix.ENOPROTOOPT }

// connectedPair is loPair's two sockets, the listening one (recv)
// connected back to the other, as the engines' sockets are.
func connectedPair(t *testing.T) (send, recv *net.UDPConn) {
	t.Helper()
	recv, send = loPair(t)
	if err := connectUDP(recv, send.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	return send, recv
}

// waitSetUp waits until an end started on recv has set its socket
// buffers (runEnd's setBuffers, or recv taken over after it), rather than
// writing after a guessed 50 ms.
func waitSetUp(t *testing.T, recv *net.UDPConn) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) { // only against a hang
		sc, err := recv.SyscallConn()
		if err != nil {
			return
		}
		size := 0
		if err := sc.Control(func(fd uintptr) { size, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) }); err != nil || size >= udpBuffer {
			return // closed: taken over after its buffers were set
		}
		if time.Now().After(deadline) {
			t.Fatalf("the end never set its socket buffers (SO_RCVBUF %d)", size)
		}
	}
}

// dataDatagrams is k datagrams of size bytes numbered from seq, back to
// back: what a GSO buffer holds, and what an old kernel sends as one.
func dataDatagrams(seq uint64, k, size int) []byte {
	b := make([]byte, k*size)
	for i := 0; i < k; i++ {
		(&Header{Kind: KindData, Seq: seq + uint64(i), Stamp: time.Now().UnixNano()}).Put(b[i*size:])
	}
	return b
}

// TestReceiveUDPJoinedDatagrams is the old kernel's silent behaviour seen
// by the receiver: a raw sender writes some 8 KiB datagrams as sent and
// some 7 x 8 KiB buffers as one 57 KiB datagram each. Those are read
// short: counted as truncated, their 7 datagrams as joined, and neither as
// received nor as lost; an oversize datagram that is not the run's is
// truncated but joins nothing.
func TestReceiveUDPJoinedDatagrams(t *testing.T) {
	const size = 8 << 10
	send, recv := connectedPair(t)
	spec := Spec{Mode: ModeUDP, Len: size, Duration: time.Second, RateSet: true}
	done := make(chan *Side)
	go func() { done <- ReceiveUDP(context.Background(), spec, recv, Options{}) }()
	waitSetUp(t, recv) // its buffer holds what follows
	var seq uint64
	write := func(b []byte) {
		if _, err := send.Write(b); err != nil {
			t.Error(err)
		}
	}
	for _, k := range []int{1, 1, 1, 7, 7, 7, 7, 1, 1} {
		write(dataDatagrams(seq, k, size))
		seq += uint64(k)
	}
	write(bytes.Repeat([]byte{0xee}, 10000)) // oversize, not ours
	end := make([]byte, HeaderLen)
	(&Header{Kind: KindEnd, Seq: seq}).Put(end)
	write(end)
	var rs *Side
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("receiver did not end")
	}
	u := rs.UDP
	t.Logf("receiver: %+v, error %q", *u, rs.Error)
	if rs.Error != "" || u.Received != 5 || u.Truncated != 5 || u.Joined != 28 || u.Lost != 0 || u.Foreign != 0 || rs.Bytes != 5*size {
		t.Fatalf("received %d (%d bytes), truncated %d, joined %d, lost %d, foreign %d; want 5, 5, 28, 0, 0",
			u.Received, rs.Bytes, u.Truncated, u.Joined, u.Lost, u.Foreign)
	}
	ss := &Side{Role: RoleSender, Messages: int64(seq), UDP: &UDPStats{Sent: int64(seq)}}
	res := Result{Spec: spec, Flows: []Flow{Summarize(spec, Forward, ss, rs)}}
	res.Judge()
	s := res.Flows[0].Summary
	if s.Lost != 0 || s.LossPercent != 0 || s.Truncated != 5 || s.Joined != 28 || s.Messages != 5 {
		t.Errorf("summary: lost %d (%.1f %%), truncated %d, joined %d, delivered %d", s.Lost, s.LossPercent, s.Truncated, s.Joined, s.Messages)
	}
	if res.Verdict != VerdictFailed || len(res.Problems) != 1 || res.Problems[0].Problem != ProblemTruncated ||
		!strings.Contains(res.Problems[0].Detail, "not network loss") || !strings.Contains(res.Problems[0].Detail, NoGSOEnv) {
		t.Errorf("verdict %s, problems %+v", res.Verdict, res.Problems)
	}
	var text bytes.Buffer
	Report{Result: &res}.WriteText(&text)
	if !strings.Contains(text.String(), "truncated: 5 datagrams read short, holding 28 of those sent") {
		t.Errorf("text report:\n%s", text.String())
	}
}

// TestRecvfromTruncation: the single-datagram read (recvfrom) reports a
// datagram read short in Flags, as recvmmsg does, with its real length
// only when asked.
func TestRecvfromTruncation(t *testing.T) {
	send, recv := connectedPair(t)
	if err := blockingIO(recv); err != nil {
		t.Fatal(err)
	}
	var pc batchConn
	control(recv, func(fd int) error {
		pc = &rawConn{fd: fd, timeout: sysTimeout}
		return nil
	})
	for _, c := range []struct {
		flags, wantN int
	}{{0, 100}, {readRealLength, 3000}} {
		send.Write(make([]byte, 3000))
		ms := []ipv4.Message{{Buffers: [][]byte{make([]byte, 100)}}}
		pc.SetReadDeadline(time.Now().Add(time.Second))
		n, err := pc.ReadBatch(ms, c.flags)
		if err != nil || n != 1 {
			t.Fatalf("read: %d %v", n, err)
		}
		pkt, size, short := datagram(&ms[0])
		if !short || size != c.wantN || len(pkt) != 100 {
			t.Errorf("flags %#x: short %v, size %d, %d bytes; want short, %d, 100", c.flags, short, size, len(pkt), c.wantN)
		}
	}
}

func TestGSOProbe(t *testing.T) {
	// This machine's kernel (6.x) has UDP GSO.
	if err := kernel.UDPGSO(); err != nil {
		t.Fatalf("probe on this kernel: %v", err)
	}
	forceGSO(t, absentGSO)
	if ok, why := gsoAvailable(); ok || !strings.Contains(why, "Linux 4.18") {
		t.Errorf("probe refused: available %v, %q", ok, why)
	}
	calls := 0
	forceGSO(t, func() error { calls++; return nil })
	for range 3 {
		gsoAvailable()
	}
	if calls != 1 {
		t.Errorf("probe asked %d times, want once per process", calls)
	}
	t.Setenv(NoGSOEnv, "1")
	if ok, why := gsoAvailable(); ok || why != NoGSOEnv+" is set" {
		t.Errorf("%s=1: available %v, %q", NoGSOEnv, ok, why)
	}
	t.Setenv(NoGSOEnv, "0")
	if ok, _ := gsoAvailable(); !ok {
		t.Errorf("%s=0 turned GSO off", NoGSOEnv)
	}
}

// TestLoopbackUDPGSOAbsent: without GSO (the probe refused) an unpaced
// sender sends datagram by datagram, says why, and loses nothing more.
// Packets per datagram come from the namespace's Ip counters, so the run
// has a loopback of its own (ownLoopback): on the host's, any other
// loopback traffic counts too (18 of 40 runs failed so beside other test
// packages). Both ends still count in one namespace: the receiver's
// feedback datagrams add a little to the sender's packets per datagram.
func TestLoopbackUDPGSOAbsent(t *testing.T) {
	forceGSO(t, absentGSO)
	res, own := runOwnLo(t, context.Background(), Spec{Mode: ModeUDP, Duration: 300 * time.Millisecond, RateSet: true, Len: 1400})
	f := res.Flows[0]
	s := f.Summary
	t.Logf("1400 B unpaced without GSO: %.0f datagrams/s, sent %d lost %d, %.3f packets per datagram, %q", s.PerSec, s.Sent, s.Lost, s.FragmentsPerMessage, f.Client.UDP.NoGSO)
	if f.Client.UDP.GSO != 0 || !strings.Contains(f.Client.UDP.NoGSO, "UDP_SEGMENT") || s.Truncated != 0 {
		t.Errorf("gso %d %q, truncated %d", f.Client.UDP.GSO, f.Client.UDP.NoGSO, s.Truncated)
	}
	if !own {
		t.Log("not root: no namespace of the test's own, so packets per datagram (host-wide counters) are not checked")
	} else if s.FragmentsPerMessage < 1 || s.FragmentsPerMessage > 1.1 {
		t.Errorf("%.3f packets per datagram sent, want 1 (up to 1.1 with the receiver's feedback)", s.FragmentsPerMessage)
	}
	if s.Sent == 0 || s.Messages+s.Lost != s.Sent || res.Verdict != VerdictOK {
		t.Errorf("sent %d delivered %d lost %d, verdict %s %+v", s.Sent, s.Messages, s.Lost, res.Verdict, res.Problems)
	}
}

// TestLoopbackUDPOldKernelSilence: the sender believes in GSO and the
// kernel ignores the control message: the receiver gets 64 KiB datagrams
// where 1400-byte ones were sent. The run fails as truncated, with no loss
// blamed on anything.
func TestLoopbackUDPOldKernelSilence(t *testing.T) {
	oldKernelSilence(t)
	res := runLo(t, context.Background(), Spec{Mode: ModeUDP, Duration: 300 * time.Millisecond, RateSet: true, Len: 1400})
	s := res.Flows[0].Summary
	t.Logf("old kernel's silence: sent %d, delivered %d, truncated %d holding %d, lost %d (%.1f %%), problems %+v", s.Sent, s.Messages, s.Truncated, s.Joined, s.Lost, s.LossPercent, res.Problems)
	// A buffer the flow window cut to one datagram leaves as just that.
	if s.Truncated == 0 || s.Joined < s.Sent/2 || s.Messages > s.Sent/100 || s.LossPercent > 5 {
		t.Errorf("truncated %d holding %d of %d, delivered %d, lost %.1f %%", s.Truncated, s.Joined, s.Sent, s.Messages, s.LossPercent)
	}
	if res.Verdict != VerdictFailed || len(res.Problems) == 0 || res.Problems[0].Problem != ProblemTruncated {
		t.Errorf("verdict %s %+v", res.Verdict, res.Problems)
	}
	if errors.Is(gsoKernel(), unix.ENOPROTOOPT) {
		t.Error("seam leaked into the probe")
	}
}

// TestRespondTruncated: a request larger than requests are is read short
// by the responder and counted as truncated (not foreign, not answered);
// a blocks run whose lost blocks had datagrams read short puts them there,
// not on the network.
func TestRespondTruncated(t *testing.T) {
	send, recv := connectedPair(t)
	spec, err := Spec{Mode: ModeBlocks, Duration: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Side)
	go func() { done <- Respond(context.Background(), spec, recv, Options{}) }()
	waitSetUp(t, recv)
	big := make([]byte, spec.Request+4096)
	(&Header{Kind: KindRequest, Seq: 1, Size: uint32(spec.Block), Chunks: 1}).Put(big)
	send.Write(big)
	end := make([]byte, HeaderLen)
	(&Header{Kind: KindEnd}).Put(end)
	send.Write(end)
	var rs *Side
	select {
	case rs = <-done:
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("responder did not end")
	}
	if b := rs.Blocks; b.Truncated != 1 || b.Foreign != 0 || b.Completed != 0 {
		t.Errorf("responder: truncated %d, foreign %d, answered %d; want 1, 0, 0", b.Truncated, b.Foreign, b.Completed)
	}
	client := &Side{Role: RoleRequester, Blocks: &BlockStats{Requests: 10, Completed: 8, Lost: 2, Truncated: 1}}
	s := Summarize(spec, Forward, client, rs).Summary
	if s.Truncated != 2 || s.LossBy == nil || s.LossBy.Truncated != 2 || s.LossBy.Network != 0 {
		t.Errorf("summary: truncated %d, lost by %+v", s.Truncated, s.LossBy)
	}
}
