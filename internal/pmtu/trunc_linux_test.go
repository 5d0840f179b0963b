package pmtu

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadLoopShort: a datagram larger than the read buffer is read short
// (MSG_TRUNC): readLoop hands it to onShort, never to onData as if it were
// what was sent; one that fits goes to onData whole.
func TestReadLoopShort(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		rx.Close()
		t.Fatal(err)
	}
	defer tx.Close()
	rc, err := rx.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var short atomic.Int64
	sizes := make(chan int, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		readLoop(rc, 1000, func(b []byte, _ unix.Sockaddr) { sizes <- len(b) }, func() { short.Add(1) }, func(b, oob []byte) {})
	}()
	tx.Write(make([]byte, 1500))
	tx.Write(make([]byte, 600))
	select {
	case n := <-sizes:
		if n != 600 {
			t.Errorf("onData got %d bytes, want the 600-byte datagram", n)
		}
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("the datagram that fits was never read")
	}
	rx.Close()
	<-done
	if short.Load() != 1 || len(sizes) != 0 {
		t.Errorf("%d read short, %d more read whole; want 1 and 0", short.Load(), len(sizes))
	}
}
