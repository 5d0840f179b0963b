// Package agent is the responder each node runs (`interlink agent`) and the
// client that talks to it. Nothing listens unless an agent runs, and nothing
// but a peer holding the shared token gets anything from it.
//
// # Sessions
//
// A client opens a TCP control session (Dial); the handshake (package wire)
// proves the token both ways without sending it and derives per-session
// data keys from the token and both nonces. The agent then serves typed
// requests on the session, one at a time, each answered by one response.
// A Session ends when the client says Bye or disconnects, when its
// MaxDuration passes, or when the agent stops; everything it opened (data
// endpoints, running handlers) ends with it, and the agent logs one line
// for it.
//
// # Limits, enforced here and nowhere else
//
//   - MaxSessions concurrent authenticated sessions;
//   - before authentication: a deadline on the handshake and caps on
//     handshakes in progress per source address and in all (admit.go), so
//     idle or slow strangers cannot hold the agent, and rate-limited
//     logging of refused peers (noise.go);
//   - MaxDuration per session: Session.Context is cancelled then;
//   - MaxRateBitsPerSec on what the agent sends for a session: every data
//     sender calls Session.Wait (or Session.Allow) before sending; zero
//     (the default) sets it per session with AutoRate from the speed of
//     the interface the session arrived on, so it guards against abuse
//     without shaping a measurement; Session.RateHeld says when it did;
//   - MaxEndpoints data endpoints per session (Session.AddEndpoint).
//
// # Extension point (for bench and other test kinds)
//
// A test kind registers a Handler for a request kind in an init function:
//
//	func init() { agent.Register("bench.stream", serveStream) }
//
//	func serveStream(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
//		var req StreamRequest
//		if err := json.Unmarshal(body, &req); err != nil { ... }
//		ep, err := s.ListenTCP(s.LocalAddr().Addr()) // session-scoped, tagged
//		...
//		return StreamReply{Port: ep.Port()}, nil
//	}
//
// The handler's ctx is the session's context; Session.Store and
// Session.Load keep per-session state between requests (an endpoint opened
// by one request, used by the next). Data endpoints opened through
// the Session (ListenUDP, ListenTCP) accept only traffic tagged for the live
// session with its keys (wire.Sealer / wire.Opener, per-packet tag and
// replay window) and close when the session ends. UDP endpoints learn their
// data peer from the first authenticated datagram and send only to it.
// A handler that answers a datagram must not send more bytes than it
// received unless the traffic was requested over the control session (block
// replies of a benchmark are), and then only through Session.Wait. (A bench
// UDP receiver's flow-control feedback keeps to the first rule: one
// 88-byte datagram at most per datagram of data received since the last.)
//
// Agent side, per endpoint: UDPEndpoint.Read returns only verified
// datagrams (header in wire.Header), UDPEndpoint.Send seals and sends to the
// learned peer after Session.Wait, UDPEndpoint.Reply answers a datagram
// with at most as many bytes (else it refuses) and drops when the rate is
// used up; TCPEndpoint.Accept returns only streams whose first 48 bytes are
// a header sealed for the session. Session.AttachUDP adopts a socket the
// handler configured itself (socket options such as DF or buffer sizes).
//
// On the client side Dial returns a Client; Client.Call sends a typed
// request and decodes the response; Client.Sealer and Client.Opener tag and
// verify data packets, Client.DialTCP opens a tagged data stream, and
// Client.Keys exposes the session keys.
//
// Built-in request kinds (pmtu.go): "pmtu.open" (open a probe endpoint on
// one of the agent's addresses), "pmtu.probe" (the agent probes back to the
// client: the reverse direction) and "pmtu.peer" (the agent runs a
// two-way path-MTU test to another agent, for mesh).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// DefaultLimits are what an agent grants unless configured otherwise.
// MaxRateBitsPerSec 0 means "auto": AutoRate per session.
var DefaultLimits = wire.Limits{
	MaxDuration:       5 * time.Minute,
	MaxRateBitsPerSec: 0,
	MaxSessions:       16,
	MaxEndpoints:      8,
}

// HandshakeTimeout bounds a client's connect and handshake. (The agent
// gives a peer Config.HandshakeDeadline, shorter, to finish its part.)
const HandshakeTimeout = 5 * time.Second

// Handler serves one request kind. body is the raw JSON of the request; the
// returned value is encoded as the response body. An error is sent to the
// client as the response's error text (keep it one line, for a person).
type Handler func(ctx context.Context, s *Session, body json.RawMessage) (any, error)

var (
	handlersMu sync.RWMutex
	handlers   = map[string]Handler{}
)

// Register makes kind available on every agent in this binary. It panics on
// a duplicate kind (a programming error, found at start-up).
func Register(kind string, h Handler) {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	if _, dup := handlers[kind]; dup {
		panic("agent: duplicate handler for " + kind)
	}
	if kind == "" || len(kind) > wire.MaxKindLen {
		panic("agent: bad request kind " + kind)
	}
	handlers[kind] = h
}

// Kinds lists the registered request kinds.
func Kinds() []string {
	handlersMu.RLock()
	defer handlersMu.RUnlock()
	ks := make([]string, 0, len(handlers))
	for k := range handlers {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func handler(kind string) Handler {
	handlersMu.RLock()
	defer handlersMu.RUnlock()
	return handlers[kind]
}

// Config configures a Server.
type Config struct {
	Token    []byte      // shared token (see ReadToken); required
	Limits   wire.Limits // zero fields take DefaultLimits
	Software string      // announced to clients, e.g. "interlink v0.1.0"
	// Log receives one line per session; lines about refused
	// unauthenticated peers are rate-limited with periodic summaries
	// (noise.go). nil discards.
	Log io.Writer

	// Admission of unauthenticated peers (admit.go); zero takes
	// DefaultHandshakeDeadline, DefaultMaxPendingPerSource and
	// DefaultMaxPending.
	HandshakeDeadline   time.Duration
	MaxPendingPerSource int
	MaxPending          int

	// AllowCPULatency lets a session hold a PM QoS CPU-latency request
	// on this host for its length (package pmqos; --allow-cpu-latency).
	// Off, such a request is refused and the run goes on without it.
	AllowCPULatency bool
}

// Server is an agent. The zero value is not usable; use NewServer.
type Server struct {
	cfg      Config
	sessions chan struct{} // semaphore: authenticated sessions
	admit    *admission    // handshakes in progress
	drainers chan struct{} // semaphore: refused connections being drained
	noise    *noiseLog     // log lines about unauthenticated peers
	logMu    sync.Mutex
	wg       sync.WaitGroup
	active   atomic.Int64
	served   atomic.Int64 // authenticated sessions since start
	rates    rateCache    // AutoRate per local address, briefly
}

// NewServer returns an agent for cfg.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.Token) == 0 {
		return nil, errors.New("agent: no token")
	}
	l := &cfg.Limits
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultLimits.MaxDuration
	}
	if l.MaxRateBitsPerSec < 0 {
		l.MaxRateBitsPerSec = DefaultLimits.MaxRateBitsPerSec
	}
	if l.MaxSessions <= 0 {
		l.MaxSessions = DefaultLimits.MaxSessions
	}
	if l.MaxEndpoints <= 0 {
		l.MaxEndpoints = DefaultLimits.MaxEndpoints
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.HandshakeDeadline <= 0 {
		cfg.HandshakeDeadline = DefaultHandshakeDeadline
	}
	if cfg.MaxPendingPerSource <= 0 {
		cfg.MaxPendingPerSource = DefaultMaxPendingPerSource
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxPending < cfg.MaxPendingPerSource {
		return nil, fmt.Errorf("agent: %d pending handshakes in all is less than %d per address", cfg.MaxPending, cfg.MaxPendingPerSource)
	}
	s := &Server{cfg: cfg, sessions: make(chan struct{}, l.MaxSessions),
		admit: newAdmission(cfg.MaxPendingPerSource, cfg.MaxPending), drainers: make(chan struct{}, maxDrainers)}
	s.noise = newNoiseLog(s.logf)
	return s, nil
}

// Limits returns the limits the server grants (MaxRateBitsPerSec 0: set
// per session by AutoRate).
func (s *Server) Limits() wire.Limits { return s.cfg.Limits }

// Active returns the number of authenticated sessions now open.
func (s *Server) Active() int { return int(s.active.Load()) }

// Sessions returns the number of authenticated sessions since the server
// started.
func (s *Server) Sessions() int64 { return s.served.Load() }

// Pending returns the number of handshakes in progress.
func (s *Server) Pending() int { return s.admit.pending() }

func (s *Server) logf(format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "%s "+format+"\n", append([]any{time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}, a...)...)
}

// Serve accepts control sessions on ln until ctx is cancelled, then closes
// ln, ends every session and returns nil. Other accept errors are returned.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	defer s.wg.Wait()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.noise.run(ctx)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of descriptors: the sessions and handshakes that
				// hold them end in time; keep serving.
				s.noise.note(netip.Addr{}, "accept: out of file descriptors", "accept: "+oneLine(err.Error()))
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return fmt.Errorf("agent: accept: %w", err)
		}
		src := sourceOf(c.RemoteAddr())
		if reason, class, ok := s.admit.admit(src); !ok {
			s.refuseNow(c, reason)
			s.noise.note(src.Addr(), class, fmt.Sprintf("refused %s: %s", c.RemoteAddr(), reason))
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, c, src)
		}()
	}
}

// ListenAndServe listens on addr (host[:port], default port wire.DefaultPort)
// and serves until ctx is cancelled. ready, if not nil, is called with the
// bound address once listening.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	hp, err := HostPort(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", hp)
	if err != nil {
		return fmt.Errorf("agent: listen %s: %w", hp, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// HostPort adds wire.DefaultPort to addr when it has no port. It accepts
// "host", "host:port", "v6addr", "[v6addr]" and "[v6addr]:port"; anything
// else (unbalanced brackets, "host:port:x", a port that is not a number
// from 0 to 65535) is an error naming the address, so that a typo is not
// dialled as a host name or reported as an agent that is not running.
func HostPort(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("empty address")
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		return netip.AddrPortFrom(a, wire.DefaultPort).String(), nil
	}
	if inner, ok := strings.CutPrefix(addr, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); ok {
			if a, err := netip.ParseAddr(inner); err == nil {
				return netip.AddrPortFrom(a, wire.DefaultPort).String(), nil
			}
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if strings.ContainsAny(addr, "[]:") {
			return "", errors.New("want HOST, HOST:PORT, IPv6 or [IPv6]:PORT")
		}
		return net.JoinHostPort(addr, fmt.Sprint(wire.DefaultPort)), nil
	}
	if strings.ContainsAny(host, "[]") {
		return "", errors.New("bad brackets: want [IPv6]:PORT")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || fmt.Sprint(n) != port {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return addr, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
