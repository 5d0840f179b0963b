package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// UDPEndpoint is a session-scoped datagram endpoint on the agent. It
// delivers only datagrams tagged for its session (everything else is
// dropped and counted), learns its data peer from the first authenticated
// datagram, and sends only to that peer, within the session's rate limit.
// It closes when the session ends.
type UDPEndpoint struct {
	s    *Session
	conn *net.UDPConn

	mu   sync.Mutex
	peer netip.AddrPort
}

// ListenUDP opens a UDP endpoint on local (port 0: any free port). local
// must be one of the agent's addresses; the zero Addr means the address the
// session's control connection arrived on.
func (s *Session) ListenUDP(local netip.Addr) (*UDPEndpoint, error) {
	if !local.IsValid() {
		local = s.LocalAddr().Addr()
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return nil, fmt.Errorf("udp endpoint on %s: %w", local, err)
	}
	return s.AttachUDP(c)
}

// AttachUDP makes an already configured socket (special socket options, as
// the path-MTU prober sets) a session endpoint; the session owns it from
// now on and closes it on failure.
func (s *Session) AttachUDP(c *net.UDPConn) (*UDPEndpoint, error) {
	e := &UDPEndpoint{s: s, conn: c}
	if err := s.AddEndpoint(c); err != nil {
		c.Close()
		return nil, err
	}
	return e, nil
}

// Conn is the underlying socket, for socket options and the error queue.
// Read and Send enforce the session rules; use the socket directly only
// for what they cannot do.
func (e *UDPEndpoint) Conn() *net.UDPConn { return e.conn }

// LocalAddr is the endpoint's address.
func (e *UDPEndpoint) LocalAddr() netip.AddrPort { return addrPort(e.conn.LocalAddr()) }

// Peer is the data peer learned from the first authenticated datagram
// (invalid until then).
func (e *UDPEndpoint) Peer() netip.AddrPort {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peer
}

// Accept checks a received datagram: it returns the verified header, or an
// error for garbage (counted as dropped). The first verified datagram fixes
// the data peer; later ones must come from it.
func (e *UDPEndpoint) Accept(pkt []byte, from netip.AddrPort) (wire.Header, error) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	h, err := e.s.open.Open(pkt)
	if err != nil {
		e.s.CountDrop()
		return h, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.peer.IsValid() {
		e.peer = from
	} else if e.peer != from {
		e.s.CountDrop()
		return h, fmt.Errorf("datagram from %s, session peer is %s", from, e.peer)
	}
	e.s.CountIn(len(pkt))
	return h, nil
}

// Read returns the next authenticated datagram into buf, dropping garbage
// and datagrams larger than buf (read short: counted as truncated, never
// as received). It returns when the session ends or the deadline set on
// Conn passes.
func (e *UDPEndpoint) Read(buf []byte) (int, wire.Header, error) {
	for {
		n, _, flags, from, err := e.conn.ReadMsgUDPAddrPort(buf, nil)
		if err != nil {
			if e.s.ctx.Err() != nil {
				return 0, wire.Header{}, fmt.Errorf("session ended: %w", e.s.ctx.Err())
			}
			return 0, wire.Header{}, err
		}
		if flags&msgTrunc != 0 {
			e.s.CountTruncated()
			continue
		}
		h, err := e.Accept(buf[:n], from)
		if err == nil {
			return n, h, nil
		}
	}
}

// Send seals pkt (its first wire.HeaderLen bytes are the header) and sends
// it to the data peer after waiting for the session's rate limit.
func (e *UDPEndpoint) Send(ctx context.Context, pkt []byte, kind wire.Kind, ref uint64) (uint64, error) {
	peer := e.Peer()
	if !peer.IsValid() {
		return 0, errors.New("udp endpoint: no authenticated peer yet")
	}
	if err := e.s.Wait(ctx, len(pkt)); err != nil {
		return 0, err
	}
	seq, err := e.s.seal.SealPacket(pkt, kind, ref)
	if err != nil {
		return 0, err
	}
	if _, err := e.conn.WriteToUDPAddrPort(pkt, peer); err != nil {
		return seq, err
	}
	e.s.CountOut(len(pkt))
	return seq, nil
}

// Reply answers a received datagram of reqLen bytes with pkt, which must
// not be longer (no amplification), and drops it when the session's rate
// is used up rather than queueing.
func (e *UDPEndpoint) Reply(reqLen int, pkt []byte, kind wire.Kind, ref uint64) error {
	if len(pkt) > reqLen {
		return fmt.Errorf("reply of %d bytes to a %d-byte datagram: refused (no amplification)", len(pkt), reqLen)
	}
	peer := e.Peer()
	if !peer.IsValid() {
		return errors.New("udp endpoint: no authenticated peer yet")
	}
	if !e.s.Allow(len(pkt)) {
		return errors.New("udp endpoint: session rate limit")
	}
	if _, err := e.s.seal.SealPacket(pkt, kind, ref); err != nil {
		return err
	}
	if _, err := e.conn.WriteToUDPAddrPort(pkt, peer); err != nil {
		return err
	}
	e.s.CountOut(len(pkt))
	return nil
}

// Close closes the endpoint (the session also does at its end).
func (e *UDPEndpoint) Close() error { return e.conn.Close() }

// streamHelloTimeout bounds how long a data stream may take to present its
// tagged header.
const streamHelloTimeout = 2 * time.Second

// TCPEndpoint is a session-scoped stream listener on the agent. Accept
// returns only connections that opened with a header tagged for the session
// (Client.DialTCP sends it); others are closed without a byte.
type TCPEndpoint struct {
	s  *Session
	ln *net.TCPListener
}

// ListenTCP opens a TCP endpoint on local (zero Addr: the control
// connection's local address), port chosen by the system.
func (s *Session) ListenTCP(local netip.Addr) (*TCPEndpoint, error) {
	if !local.IsValid() {
		local = s.LocalAddr().Addr()
	}
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return nil, fmt.Errorf("tcp endpoint on %s: %w", local, err)
	}
	if err := s.AddEndpoint(ln); err != nil {
		ln.Close()
		return nil, err
	}
	return &TCPEndpoint{s: s, ln: ln}, nil
}

// LocalAddr is the endpoint's address.
func (e *TCPEndpoint) LocalAddr() netip.AddrPort { return addrPort(e.ln.Addr()) }

// Accept waits for the next authenticated data stream and returns it with
// its verified header (Kind and Ref as the client sealed them).
func (e *TCPEndpoint) Accept(ctx context.Context) (net.Conn, wire.Header, error) {
	stop := context.AfterFunc(ctx, func() { e.ln.SetDeadline(time.Now()) })
	defer stop()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil, wire.Header{}, ctx.Err()
			}
			return nil, wire.Header{}, err
		}
		c.SetReadDeadline(time.Now().Add(streamHelloTimeout))
		hdr := make([]byte, wire.HeaderLen)
		if _, err := io.ReadFull(c, hdr); err != nil {
			e.s.CountDrop()
			c.Close()
			continue
		}
		h, err := e.s.open.OpenHeader(hdr)
		if err != nil {
			e.s.CountDrop()
			c.Close()
			continue
		}
		c.SetReadDeadline(time.Time{})
		return c, h, nil
	}
}

// Close closes the listener (the session also does at its end).
func (e *TCPEndpoint) Close() error { return e.ln.Close() }

// DialTCP opens a data stream to a session's TCP endpoint at addr and sends
// the tagged header (kind, ref) that the endpoint requires.
func (c *Client) DialTCP(ctx context.Context, addr netip.AddrPort, kind wire.Kind, ref uint64) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return nil, fmt.Errorf("agent %s: data stream %s: %w", c.Addr, addr, err)
	}
	hdr := make([]byte, wire.HeaderLen)
	if _, err := c.seal.Seal(hdr, kind, ref, wire.HeaderLen); err != nil {
		conn.Close()
		return nil, err
	}
	if _, err := conn.Write(hdr); err != nil {
		conn.Close()
		return nil, fmt.Errorf("agent %s: data stream %s: %w", c.Addr, addr, err)
	}
	return conn, nil
}
