package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// slowConn holds its second write (the client's auth) back until the
// agent's handshake deadline has passed: a client descheduled between
// reading the challenge and answering it.
type slowConn struct {
	net.Conn
	writes int
	hold   time.Duration
}

func (c *slowConn) Write(p []byte) (int, error) {
	if c.writes++; c.writes == 2 {
		time.Sleep(c.hold)
	}
	return c.Conn.Write(p)
}

// A client whose handshake reached the agent after its deadline is refused
// as late, and Dial dials once more: the agent is alive, the client was
// slow. Twice late is the refusal, marked late.
func TestDialAgainWhenLate(t *testing.T) {
	t.Parallel() // waits out the handshake deadline
	_, addr, _, _ := startServer(t, Config{HandshakeDeadline: 200 * time.Millisecond})
	for _, tc := range []struct {
		name string
		slow int32 // connections held back
		ok   bool
	}{{"late once", 1, true}, {"late twice", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int32
			opt := DialOptions{Software: "test client", Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, a)
				if err != nil || dials.Add(1) > tc.slow {
					return c, err
				}
				return &slowConn{Conn: c, hold: 600 * time.Millisecond}, nil
			}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, testToken, opt)
			if c != nil {
				defer c.Close()
			}
			var re *RefusedError
			switch {
			case tc.ok && err != nil:
				t.Fatalf("dial: %v, want a session on the second connection", err)
			case !tc.ok && (!errors.As(err, &re) || !re.Late()):
				t.Fatalf("dial: %v, want a refusal as late", err)
			case dials.Load() != 2:
				t.Fatalf("%d connections, want 2", dials.Load())
			}
		})
	}
}

// Only the agent's deadline refusal is late: not a busy agent's, nor a
// wrong token's.
func TestRefusedLate(t *testing.T) {
	for reason, want := range map[string]bool{
		"handshake timeout: no auth within 3s":                            true,
		"handshake timeout: no hello within 3s":                           true,
		"agent busy: 8 pending handshakes from your address (limit 8 ...": false,
		"authentication failed: the client's token does not match":        false,
		"handshake timeout": false,
	} {
		if got := (&RefusedError{Reason: reason}).Late(); got != want {
			t.Errorf("%q: Late() = %v, want %v", reason, got, want)
		}
	}
}

// Timeout tells a dial that got no answer in time from one that got an
// answer (a refusal, a closed port).
func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&noAnswer{msg: "agent x: no answer to the handshake within 5s", err: &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}}, true},
		{fmt.Errorf("agent x: connect: %w", &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}), true},
		{fmt.Errorf("agent x: connect: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), false},
		{&RefusedError{Reason: "handshake timeout: no auth within 3s"}, false},
		{nil, false},
	} {
		if got := Timeout(c.err); got != c.want {
			t.Errorf("Timeout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
