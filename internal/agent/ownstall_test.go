package agent

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// stallListener's connections stall for hold around one of their writes:
// an agent descheduled past its own handshake deadline while the client
// waits for it.
type stallListener struct {
	net.Listener
	hold     time.Duration
	write    int  // the write to stall at: 1 the challenge, 2 the welcome
	before   bool // stall before that write, not after it
	accepted atomic.Int32
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	return &stallConn{Conn: c, l: l}, nil
}

type stallConn struct {
	net.Conn
	l      *stallListener
	writes int
}

func (c *stallConn) Write(p []byte) (int, error) {
	c.writes++
	if c.writes == c.l.write && c.l.before {
		time.Sleep(c.l.hold)
	}
	n, err := c.Conn.Write(p)
	if c.writes == c.l.write && !c.l.before {
		time.Sleep(c.l.hold)
	}
	return n, err
}

// TestOwnStallIsNotLate: an agent that was itself descheduled past its
// handshake deadline, while the client's proof came in time or the client
// waits for its welcome, reads that proof and welcomes the client on the
// first connection: it neither refuses it as late nor fails its welcome
// on the passed deadline.
func TestOwnStallIsNotLate(t *testing.T) {
	t.Parallel() // waits out the handshake deadline
	// Before the welcome the stall outlasts any fresh deadline the
	// agent might have set after reading the proof (a second).
	for _, tc := range []struct {
		name   string
		write  int
		before bool
		hold   time.Duration
	}{{"after the challenge", 1, false, 400 * time.Millisecond}, {"before the welcome", 2, true, 1200 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(Config{Token: testToken, HandshakeDeadline: 200 * time.Millisecond, Log: &syncBuf{}})
			if err != nil {
				t.Fatal(err)
			}
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := &stallListener{Listener: inner, hold: tc.hold, write: tc.write, before: tc.before}
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
		})
	}
}
