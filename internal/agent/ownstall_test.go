package agent

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// stallListener's connections stall after their first write (the agent's
// challenge) for hold: an agent descheduled past its own handshake
// deadline while the client's answer waits in its socket.
type stallListener struct {
	net.Listener
	hold     time.Duration
	accepted atomic.Int32
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	return &stallConn{Conn: c, hold: l.hold}, nil
}

type stallConn struct {
	net.Conn
	writes int
	hold   time.Duration
}

func (c *stallConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.writes++; c.writes == 1 {
		time.Sleep(c.hold)
	}
	return n, err
}

// TestOwnStallIsNotLate: an agent that was itself descheduled past its
// handshake deadline, while the client's proof came in time, reads that
// proof and welcomes the client on the first connection: it neither
// refuses it as late nor fails its welcome on the passed deadline.
func TestOwnStallIsNotLate(t *testing.T) {
	t.Parallel() // waits out the handshake deadline
	srv, err := NewServer(Config{Token: testToken, HandshakeDeadline: 200 * time.Millisecond, Log: &syncBuf{}})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &stallListener{Listener: inner, hold: 400 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	c, err := Dial(dctx, inner.Addr().String(), testToken, DialOptions{Software: "test client"})
	if err != nil {
		t.Fatalf("dial: %v, want a session", err)
	}
	c.Close()
	if n := ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1: the agent's own stall was taken for a late client", n)
	}
}
