package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/wire"
)

// ErrRefused is wrapped by every error that means the agent (or the client,
// on checking the agent's proof) refused the session: wrong token, wrong
// version, agent busy. Callers test with errors.Is.
var ErrRefused = errors.New("refused")

// ErrNotAgent is wrapped by the error of a peer that answered, but not
// as an interlink agent does (a web server, sshd, a database).
var ErrNotAgent = errors.New("not an interlink agent")

// recorder keeps the first bytes read through it, to show what a peer
// that is not an agent answered.
type recorder struct {
	r   io.Reader
	buf []byte
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if len(r.buf) < 64 {
		r.buf = append(r.buf, p[:min(n, 64-len(r.buf))]...)
	}
	return n, err
}

// notAgent is the error for a peer whose answer is no agent's frame: its
// first line as it came (what is waiting of it is read for up to 100 ms).
func notAgent(c net.Conn, rec *recorder, hp string) error {
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	io.ReadFull(rec, make([]byte, 64))
	first, _, _ := strings.Cut(string(rec.buf), "\n")
	first = termtext.Clean(strings.ToValidUTF8(strings.TrimSpace(first), "?"))
	return fmt.Errorf("agent %s: %w: it answered %q; check the address and port 'interlink agent' listens on", hp, ErrNotAgent, first)
}

// RefusedError is a refusal with the reason meant for a person.
type RefusedError struct {
	Addr   string
	Reason string
}

// lateReason begins an agent's refusal of a client whose handshake
// message came after Config.HandshakeDeadline.
const lateReason = "handshake timeout"

// Late reports a refusal because the client's handshake came too late: the
// agent is alive and the client was slow (descheduled on a loaded host), so
// dialling again is the remedy.
func (e *RefusedError) Late() bool { return strings.HasPrefix(e.Reason, lateReason+":") }

// noAnswer is a handshake that timed out, said for a person; it unwraps
// to the read's timeout.
type noAnswer struct {
	msg string
	err error
}

func (e *noAnswer) Error() string { return e.msg }
func (e *noAnswer) Unwrap() error { return e.err }

// Stalled reports a dial whose connection was made (the host is up and
// something listens) but whose handshake got no answer in time: an agent
// descheduled for seconds (a node at full CPU, a paused VM) looks so, as
// does a listener that is no agent.
func Stalled(err error) bool {
	var na *noAnswer
	return errors.As(err, &na)
}

// Timeout reports a dial that failed for want of an answer in time, to
// the connect or to the handshake: the agent may be dead, or either side
// only descheduled for seconds.
func Timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Error shows Reason through termtext.Clean: it came from the peer.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("agent %s refused the session: %s", e.Addr, termtext.Clean(e.Reason))
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// RemoteError is a request that the agent answered with an error.
type RemoteError struct {
	Addr      string // agent's control address; empty when unknown
	Kind, Msg string
}

// Error shows Msg through termtext.Clean: it came from the peer.
func (e *RemoteError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("agent: %s: %s", e.Kind, termtext.Clean(e.Msg))
	}
	return fmt.Sprintf("agent %s: %s: %s", e.Addr, e.Kind, termtext.Clean(e.Msg))
}

// DialOptions tune Dial. The zero value is fine.
type DialOptions struct {
	// Software is announced to the agent for its log.
	Software string
	// Local, when valid, is the source address of the control connection.
	Local netip.Addr
	// Dial, when set, opens the TCP connection (for a network namespace,
	// or tests); it gets "tcp" and host:port.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client is the client side of one control session. Calls are serialised:
// one request is in flight at a time. Close ends the session.
type Client struct {
	Addr    string      // agent's control address, host:port
	Session uint64      // session id granted by the agent
	Keys    wire.Keys   // per-session data keys
	Tag     string      // the data tag algorithm the agent chose (wire.TagHMAC, wire.TagGMAC)
	Limits  wire.Limits // what the agent granted
	Agent   string      // agent software version, as termtext.Clean shows it

	conn net.Conn
	seal *wire.Sealer
	open *wire.Opener
	mu   sync.Mutex
	id   uint32
}

// Dial opens an authenticated session with the agent at addr (host[:port],
// default port wire.DefaultPort). A refusal is a *RefusedError; the client
// also refuses an agent that cannot prove the token, before sending its own
// proof. An agent that refuses because this client's handshake came too
// late (a client descheduled for seconds on a loaded host: the agent is
// alive) is dialled once more.
func Dial(ctx context.Context, addr string, token []byte, opt DialOptions) (*Client, error) {
	hp, err := HostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	if len(token) == 0 {
		return nil, fmt.Errorf("agent %s: no token", hp)
	}
	cl, err := dialOnce(ctx, hp, token, opt)
	var re *RefusedError
	if errors.As(err, &re) && re.Late() && ctx.Err() == nil {
		cl, err = dialOnce(ctx, hp, token, opt)
	}
	return cl, err
}

// dialOnce connects to hp and runs the handshake.
func dialOnce(ctx context.Context, hp string, token []byte, opt DialOptions) (*Client, error) {
	dial := opt.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: HandshakeTimeout}
		if opt.Local.IsValid() {
			d.LocalAddr = &net.TCPAddr{IP: opt.Local.AsSlice(), Zone: opt.Local.Zone()}
		}
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", hp)
	if err != nil {
		return nil, fmt.Errorf("agent %s: connect: %w (is 'interlink agent' running there?)", hp, err)
	}
	cl, err := handshake(ctx, c, hp, token, opt.Software)
	if err != nil {
		c.Close()
		return nil, err
	}
	return cl, nil
}

func handshake(ctx context.Context, c net.Conn, hp string, token []byte, software string) (*Client, error) {
	start := time.Now()
	deadline := start.Add(HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	fail := func(what string, err error) error {
		return fmt.Errorf("agent %s: handshake: %s: %w", hp, what, err)
	}
	cn, err := wire.NewNonce()
	if err != nil {
		return nil, err
	}
	if err := wire.Write(c, &wire.Hello{Magic: wire.Magic, Version: wire.Version, Nonce: cn, Software: software, Tags: wire.Tags}); err != nil {
		// A busy agent refuses at once and closes; its reason may be
		// waiting to be read.
		if m, rerr := wire.Read(c); rerr == nil {
			if v, ok := m.(*wire.Refuse); ok {
				return nil, &RefusedError{Addr: hp, Reason: v.Reason}
			}
		}
		return nil, fail("send hello", err)
	}
	rec := &recorder{r: c}
	m, err := wire.Read(rec)
	if err != nil {
		if errors.Is(err, wire.ErrBadType) || errors.Is(err, wire.ErrFrameTooLarge) || errors.Is(err, wire.ErrBadMessage) {
			return nil, notAgent(c, rec, hp)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
			return nil, &noAnswer{msg: fmt.Sprintf("agent %s: no answer to the handshake within %v; is 'interlink agent' listening at that address and port?", hp, deadline.Sub(start).Round(100*time.Millisecond)), err: err}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			err = fmt.Errorf("%w (the agent closed the connection without a reason: an older agent does so when busy)", err)
		}
		return nil, fail("read challenge", err)
	}
	var ch *wire.Challenge
	switch v := m.(type) {
	case *wire.Refuse:
		return nil, &RefusedError{Addr: hp, Reason: v.Reason}
	case *wire.Challenge:
		ch = v
	default:
		return nil, fail("expected challenge", fmt.Errorf("got %T", m))
	}
	if !wire.ProofOK(wire.AgentProof(token, cn, ch.Nonce), ch.Proof) {
		// Tell the agent why, so its log says so too, and send no proof.
		wire.Write(c, &wire.Refuse{Reason: "authentication failed: the agent's token does not match the client's"})
		return nil, &RefusedError{Addr: hp, Reason: "authentication failed: the agent does not hold our token (wrong token on one side)"}
	}
	if err := wire.Write(c, &wire.Auth{Proof: wire.ClientProof(token, cn, ch.Nonce)}); err != nil {
		return nil, fail("send auth", err)
	}
	m, err = wire.Read(c)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
			return nil, &noAnswer{msg: fmt.Sprintf("agent %s: no answer to the handshake's proof within %v: the agent is up (it sent its challenge) but did not finish the handshake in time", hp, deadline.Sub(start).Round(100*time.Millisecond)), err: err}
		}
		return nil, fail("read welcome", err)
	}
	switch v := m.(type) {
	case *wire.Refuse:
		return nil, &RefusedError{Addr: hp, Reason: v.Reason}
	case *wire.Welcome:
		c.SetDeadline(time.Time{})
		keys := wire.SessionKeys(token, cn, ch.Nonce)
		seal, err := wire.NewSealerTag(v.Tag, keys.ClientToAgent, v.Session)
		if err != nil {
			return nil, fail("welcome", err)
		}
		open, err := wire.NewOpenerTag(v.Tag, keys.AgentToClient, v.Session)
		if err != nil {
			return nil, fail("welcome", err)
		}
		return &Client{
			Addr: hp, Session: v.Session, Keys: keys, Tag: v.Tag, Limits: v.Limits, Agent: termtext.Clean(v.Agent), conn: c,
			seal: seal, open: open,
		}, nil
	default:
		return nil, fail("expected welcome", fmt.Errorf("got %T", m))
	}
}

// Sealer tags what the client sends in this session.
func (c *Client) Sealer() *wire.Sealer { return c.seal }

// Opener verifies what the agent sends in this session.
func (c *Client) Opener() *wire.Opener { return c.open }

// LocalAddr is the client's end of the control connection.
func (c *Client) LocalAddr() netip.AddrPort { return addrPort(c.conn.LocalAddr()) }

// RemoteAddr is the agent's end of the control connection.
func (c *Client) RemoteAddr() netip.AddrPort { return addrPort(c.conn.RemoteAddr()) }

// Call sends a request of kind with req encoded as its body and decodes the
// response body into resp (when resp is not nil). An error answer from the
// agent is a *RemoteError. Cancelling ctx aborts the call and the session.
func (c *Client) Call(ctx context.Context, kind string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("agent %s: %s: encode: %w", c.Addr, kind, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	id := c.id
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Now()) })
	defer stop()
	if err := wire.Write(c.conn, &wire.Request{ID: id, Kind: kind, Body: body}); err != nil {
		return c.ctxErr(ctx, kind, err)
	}
	m, err := wire.Read(c.conn)
	if err != nil {
		return c.ctxErr(ctx, kind, err)
	}
	switch v := m.(type) {
	case *wire.Refuse:
		return &RefusedError{Addr: c.Addr, Reason: v.Reason}
	case *wire.Response:
		if v.ID != id {
			return fmt.Errorf("agent %s: %s: response id %d, want %d", c.Addr, kind, v.ID, id)
		}
		if v.Error != "" {
			return &RemoteError{Addr: c.Addr, Kind: kind, Msg: v.Error}
		}
		if resp != nil {
			if err := json.Unmarshal(v.Body, resp); err != nil {
				return fmt.Errorf("agent %s: %s: decode response: %w", c.Addr, kind, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("agent %s: %s: unexpected %T", c.Addr, kind, m)
	}
}

func (c *Client) ctxErr(ctx context.Context, kind string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return fmt.Errorf("agent %s: %s: %w", c.Addr, kind, err)
}

// Close says Bye and closes the control connection; the agent then closes
// every endpoint of the session.
func (c *Client) Close() error {
	c.conn.SetWriteDeadline(time.Now().Add(time.Second))
	wire.Write(c.conn, &wire.Bye{})
	return c.conn.Close()
}
