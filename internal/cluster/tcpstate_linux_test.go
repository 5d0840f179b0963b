package cluster

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/tcpinfo"
)

// Where TCP_INFO has no bytes_acked (before 4.1: 3.10's 104 bytes, cut at
// the syscall), the acknowledged count comes from the bytes written less
// SIOCOUTQ: the same figure as the kernel's, read on one connection that
// stands still with data queued (its peer stopped reading).
func TestTCPStateWithoutBytesAcked(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close() // never read: the window closes
	tcp := c.(*net.TCPConn)
	tcp.SetWriteBuffer(16 << 10)
	l := &link{tcp: tcp}
	w := countConn{tcp, l}
	// Loopback fills the peer's window within the first writes; the
	// deadline only ends the last, blocked one.
	tcp.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 64<<10)
	for i := 0; i < 1000; i++ {
		if _, err := w.Write(buf); err != nil {
			break
		}
	}
	full := waitStuck(t, l) // the last ACKs arrived: the state stops changing
	restore := tcpinfo.LimitLength(tcpinfo.BaseLen)
	old, ok := readTCPState(l)
	restore()
	if !ok || !full.AckedByKernel || old.AckedByKernel {
		t.Fatalf("full %+v, 3.10 %+v (%v)", full, old, ok)
	}
	if full.Acked <= 0 || full.Queued <= 0 || full.Acked+full.Queued != l.written.Load() {
		t.Errorf("kernel: %d acked + %d queued != %d written", full.Acked, full.Queued, l.written.Load())
	}
	if old.Acked != full.Acked || old.Queued != full.Queued || old.Unacked != full.Unacked {
		t.Errorf("without bytes_acked %+v, with %+v", old, full)
	}
}

// A copy that stands still on a kernel without bytes_acked says how far
// it got from the fallback, never "at 0 of N bytes".
func TestStallWithoutBytesAcked(t *testing.T) {
	defer tcpinfo.LimitLength(tcpinfo.BaseLen)()
	srv := newSSHServer(t)
	// Half a second: the copy fills the buffers in milliseconds. Not
	// parallel: LimitLength acts on the whole process.
	n := &node{link: dialTest(t, srv), stall: 500 * time.Millisecond, res: &NodeResult{}}
	payload := make([]byte, 8<<20)
	_, err := n.must(context.Background(), "copy binary", "stall", payload)
	var se *stallError
	if !errors.As(err, &se) {
		t.Fatalf("copy to a node that stopped reading: %v, want a stall", err)
	}
	t.Logf("%v", err)
	if se.Likely != LikelyNotReading || se.Bytes <= 0 || se.Bytes >= se.TotalBytes || strings.Contains(err.Error(), "at 0 of") {
		t.Errorf("stall %+v: %v", se.Stall, err)
	}
}
