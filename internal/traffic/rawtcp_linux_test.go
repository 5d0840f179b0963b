package traffic

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// A raw TCP end sends and receives a whole stream on the duplicate, ends
// it with a half-close both ways, and reads TCP_INFO from the duplicate.
func TestRawTCPEnd(t *testing.T) {
	if cap(rawSlots) < 1 {
		t.Skip("GOMAXPROCS 1: no raw loops")
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for _, c := range []*net.TCPConn{cc, sc} {
		if err := blockingIO(c); err != nil {
			t.Fatal(err)
		}
	}
	send := openTCPEnd(cc) // takes the slot
	defer send.release()
	recv := openTCPEnd(sc) // none left when GOMAXPROCS is 2: the netpoller
	defer recv.release()
	if send.fd < 0 {
		t.Fatal("no raw slot for the first end")
	}
	if _, err := cc.Write([]byte("x")); err == nil {
		t.Error("the conn still writes after openTCPEnd took it over")
	}
	ctx := context.Background()
	end := time.Now().Add(100 * time.Millisecond)
	var sent, got, started atomic.Int64
	done := make(chan error, 1)
	go func() { done <- recv.read(ctx, end.Add(5*time.Second), &got, &started) }()
	if err := send.write(ctx, 64<<10, end, &sent, Options{}); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("read: %v", err)
	}
	if sent.Load() == 0 || got.Load() != sent.Load() || started.Load() == 0 {
		t.Errorf("sent %d, received %d (first byte at %d)", sent.Load(), got.Load(), started.Load())
	}
	ti, err := send.info()
	if err != nil || ti.mss <= 0 || ti.rtt <= 0 {
		t.Errorf("TCP_INFO from the duplicate: %+v, %v", ti, err)
	}
}
