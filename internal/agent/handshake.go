package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/wire"
)

// preauth is one unauthenticated connection on its way to a session.
type preauth struct {
	ctx context.Context
	s   *Server
	c   net.Conn
	src netip.Addr
}

// refuse sends the peer reason and logs it (rate-limited) under class.
func (p preauth) refuse(class, reason string) {
	p.c.SetWriteDeadline(time.Now().Add(time.Second))
	wire.Write(p.c, &wire.Refuse{Reason: reason})
	p.s.noise.note(p.src, class, fmt.Sprintf("refused %s: %s", p.c.RemoteAddr(), reason))
}

// drop logs a connection that ended without a refusal being possible (the
// peer closed it).
func (p preauth) drop(class, why string) {
	p.s.noise.note(p.src, class, fmt.Sprintf("dropped %s: %s", p.c.RemoteAddr(), why))
}

// readFailed answers a failed read of the handshake's message what: a
// refusal with the reason whenever the peer can still read one (garbage,
// a malformed message, the deadline), a log line when it has gone.
func (p preauth) readFailed(what string, err error) {
	switch {
	case p.ctx.Err() != nil:
		p.refuse("agent stopping", "agent stopping")
	case errors.Is(err, wire.ErrBadMessage) || errors.Is(err, wire.ErrBadType) || errors.Is(err, wire.ErrFrameTooLarge):
		if what == "hello" {
			p.refuse("not an interlink client", "not an interlink client: "+oneLine(err.Error()))
		} else {
			p.refuse("protocol error", fmt.Sprintf("protocol error: bad %s message: %s", what, oneLine(err.Error())))
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		p.refuse(lateReason, fmt.Sprintf("%s: no %s within %v", lateReason, what, p.s.cfg.HandshakeDeadline))
	default:
		p.drop("closed before "+what, fmt.Sprintf("no %s: %s", what, oneLine(err.Error())))
	}
}

func (s *Server) serveConn(ctx context.Context, c net.Conn, src netip.Prefix) {
	defer c.Close()
	sess, ok := s.handshake(ctx, c)
	s.admit.release(src)
	if !ok {
		return
	}
	defer func() { <-s.sessions }()
	s.active.Add(1)
	s.served.Add(1)
	defer s.active.Add(-1)
	sess.serve()
}

// handshake runs the agent side of the handshake and returns a session on
// success. On failure the peer got a Refuse with the reason whenever it
// could still read one, and the agent logged it (rate-limited).
func (s *Server) handshake(ctx context.Context, c net.Conn) (*Session, bool) {
	p := preauth{ctx: ctx, s: s, c: c, src: addrPort(c.RemoteAddr()).Addr()}
	c.SetDeadline(time.Now().Add(s.cfg.HandshakeDeadline))
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	m, err := readOwnStall(c)
	if err != nil {
		p.readFailed("hello", err)
		return nil, false
	}
	hello, ok := m.(*wire.Hello)
	if !ok {
		p.refuse("protocol error", fmt.Sprintf("protocol error: expected hello, got %s", typeName(m)))
		return nil, false
	}
	if hello.Version != wire.Version {
		p.refuse("protocol version", fmt.Sprintf("protocol version %d not supported: this agent speaks version %d (upgrade interlink on one side)", hello.Version, wire.Version))
		return nil, false
	}
	sn, err := wire.NewNonce()
	if err != nil {
		p.refuse("internal error", "agent internal error: "+oneLine(err.Error()))
		return nil, false
	}
	tok := s.cfg.Token
	if err := writeOwnStall(c, &wire.Challenge{Version: wire.Version, Nonce: sn, Proof: wire.AgentProof(tok, hello.Nonce, sn)}); err != nil {
		p.drop("closed before challenge", "send challenge: "+oneLine(err.Error()))
		return nil, false
	}
	m, err = readOwnStall(c)
	if err != nil {
		p.readFailed("auth", err)
		return nil, false
	}
	switch v := m.(type) {
	case *wire.Refuse:
		p.s.noise.note(p.src, "refused by the client", fmt.Sprintf("refused by %s: %s", c.RemoteAddr(), termtext.Clean(oneLine(v.Reason))))
		return nil, false
	case *wire.Auth:
		if !wire.ProofOK(wire.ClientProof(tok, hello.Nonce, sn), v.Proof) {
			p.refuse("authentication failed", "authentication failed: the client's token does not match this agent's token")
			return nil, false
		}
	default:
		p.refuse("protocol error", fmt.Sprintf("protocol error: expected auth, got %s", typeName(m)))
		return nil, false
	}
	// Authenticated: what follows is logged in full.
	select {
	case s.sessions <- struct{}{}:
	default:
		reason := fmt.Sprintf("busy: %d sessions already open (agent limit); try again later", s.cfg.Limits.MaxSessions)
		writeOwnStall(c, &wire.Refuse{Reason: reason})
		s.logf("refused %s: %s", c.RemoteAddr(), reason)
		return nil, false
	}
	id := wire.RandomID()
	tag := wire.PickTag(hello.Tags)
	sess, err := newSession(ctx, s, c, id, wire.SessionKeys(tok, hello.Nonce, sn), tag, termtext.Clean(hello.Software))
	if err != nil {
		p.refuse("internal error", "agent internal error: "+oneLine(err.Error()))
		<-s.sessions
		return nil, false
	}
	if err := writeOwnStall(c, &wire.Welcome{Session: id, Limits: sess.Limits, Agent: s.cfg.Software, Tag: tag}); err != nil {
		sess.cancel()
		<-s.sessions
		return nil, false
	}
	c.SetDeadline(time.Time{})
	return sess, true
}

// stallGrace is how long readOwnStall waits, past the handshake's
// deadline, for what the peer sent before it.
const stallGrace = 100 * time.Millisecond

// readOwnStall reads the next handshake message. A read that fails at the
// deadline before a byte of the message was read is tried once more for
// stallGrace: when this agent was descheduled past its deadline (a node at
// full CPU, a paused VM), what the peer sent in time is waiting, and Go
// fails a read whose deadline has passed without looking.
func readOwnStall(c net.Conn) (any, error) {
	cr := &countingReader{r: c}
	m, err := wire.Read(cr)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && cr.n == 0 {
		c.SetReadDeadline(time.Now().Add(stallGrace))
		return wire.Read(c)
	}
	return m, err
}

// writeOwnStall writes a handshake message. A write that fails at the
// deadline before a byte of it went out (this agent descheduled past its
// own deadline: the peer may still be waiting for it) is tried once more
// with a second to go: the deadline bounds what a peer may hold, not how
// long this agent may stall.
func writeOwnStall(c net.Conn, m any) error {
	cw := &countingWriter{w: c}
	err := wire.Write(cw, m)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && cw.n == 0 {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		return wire.Write(c, m)
	}
	return err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// typeName names a message for a refusal ("bye", not "*wire.Bye").
func typeName(m any) string {
	switch m.(type) {
	case *wire.Hello:
		return "hello"
	case *wire.Challenge:
		return "challenge"
	case *wire.Auth:
		return "auth"
	case *wire.Welcome:
		return "welcome"
	case *wire.Refuse:
		return "refuse"
	case *wire.Request:
		return "request"
	case *wire.Response:
		return "response"
	case *wire.Bye:
		return "bye"
	}
	return fmt.Sprintf("%T", m)
}
