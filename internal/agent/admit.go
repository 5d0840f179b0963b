package agent

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// Admission of unauthenticated connections. Until a peer has proven the
// token it costs the agent one goroutine, one socket and a few KiB, so
// the agent bounds how many such peers it holds and for how long:
//
//   - every handshake must finish within Config.HandshakeDeadline;
//   - at most Config.MaxPendingPerSource handshakes are in progress per
//     source (an IPv4 address, or an IPv6 /64: one host's share);
//   - at most Config.MaxPending in all.
//
// A connection over a cap is answered at once with a Refuse naming the
// cap ("agent busy: 8 pending handshakes from your address"), so a client
// sharing the flooder's address reads why, and is closed; a client from
// another address is unaffected by one flooding address.

// Defaults for the admission bounds (Config fields left zero).
const (
	DefaultHandshakeDeadline   = 3 * time.Second
	DefaultMaxPendingPerSource = 8
	DefaultMaxPending          = 128
)

// maxDrainers bounds the refused connections kept open briefly after their
// refusal: the agent half-closes and reads what the peer already sent, so
// that the peer's kernel delivers the refusal rather than a reset. Past
// this many a refused connection is closed at once.
const maxDrainers = 32

// drainFor is how long a refused connection is drained.
const drainFor = 500 * time.Millisecond

// admission counts handshakes in progress, per source and in all.
type admission struct {
	mu        sync.Mutex
	perSource map[netip.Prefix]int
	total     int
	maxSource int
	maxTotal  int
}

func newAdmission(maxSource, maxTotal int) *admission {
	return &admission{perSource: map[netip.Prefix]int{}, maxSource: maxSource, maxTotal: maxTotal}
}

// sourceOf is the admission key of a peer: its IPv4 address, or its IPv6
// /64 (a host usually holds a whole /64, so per-address caps would not
// bind it).
func sourceOf(a net.Addr) netip.Prefix {
	ip := addrPort(a).Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

// admit takes a handshake slot for src, or returns the refusal and its
// log class when a cap is reached.
func (a *admission) admit(src netip.Prefix) (reason, class string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := a.perSource[src]; n >= a.maxSource {
		return fmt.Sprintf("agent busy: %d pending handshakes from your address (limit %d per address); try again in a few seconds", n, a.maxSource),
			"busy: per-address limit", false
	}
	if a.total >= a.maxTotal {
		return fmt.Sprintf("agent busy: %d pending handshakes (limit %d); try again in a few seconds", a.total, a.maxTotal),
			"busy: total limit", false
	}
	a.perSource[src]++
	a.total++
	return "", "", true
}

// release gives back the slot admit took for src.
func (a *admission) release(src netip.Prefix) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total--
	if a.perSource[src]--; a.perSource[src] <= 0 {
		delete(a.perSource, src)
	}
}

// pending returns the handshakes in progress.
func (a *admission) pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
}

// refuseNow answers a connection the agent will not serve with reason and
// closes it, without blocking the accept loop: the write goes to an empty
// socket buffer (and is bounded by a deadline anyway), and draining, when
// a drainer is free, runs on its own goroutine.
func (s *Server) refuseNow(c net.Conn, reason string) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if wire.Write(c, &wire.Refuse{Reason: reason}) != nil {
		c.Close()
		return
	}
	select {
	case s.drainers <- struct{}{}:
	default:
		c.Close()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.drainers }()
		drain(c)
	}()
}

// drain half-closes c (the peer reads the refusal, then end of stream),
// reads and discards what the peer sent for up to drainFor, then closes
// it. Closing a socket with unread data makes the kernel send a reset,
// which can overtake the refusal on the peer's side.
func drain(c net.Conn) {
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(drainFor))
	buf := make([]byte, 4096)
	for total := 0; total < 64<<10; {
		n, err := c.Read(buf)
		total += n
		if err != nil {
			return
		}
	}
}
