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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/units"
	"github.com/interlink/interlink/internal/wire"
)

// Session is one authenticated control session on the agent side. Handlers
// receive it; its methods are safe for concurrent use.
type Session struct {
	ID       uint64
	Keys     wire.Keys
	Tag      string      // the data tag algorithm (wire.TagHMAC, wire.TagGMAC)
	Limits   wire.Limits // what this session was granted (MaxRateBitsPerSec resolved, never 0)
	Software string      // what the client announced
	// RateBasis says how Limits.MaxRateBitsPerSec was chosen: "--max-rate"
	// or AutoRate's phrase.
	RateBasis string

	srv    *Server
	conn   net.Conn
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
	rate   *bucket
	seal   *wire.Sealer // agent to client
	open   *wire.Opener // client to agent

	mu        sync.Mutex
	endpoints []io.Closer
	kinds     map[string]int
	failed    int    // requests answered with an error
	end       string // why the session ended
	values    map[string]any

	PacketsIn, PacketsOut, BytesIn, BytesOut, Dropped atomic.Int64
	// Truncated counts datagrams read short (larger than the reader's
	// buffer): neither received nor garbage.
	Truncated atomic.Int64
}

// newSession starts a session whose data packets carry tags of algorithm
// tag (wire.PickTag of the client's offer).
func newSession(parent context.Context, srv *Server, c net.Conn, id uint64, keys wire.Keys, tag, software string) (*Session, error) {
	seal, err := wire.NewSealerTag(tag, keys.AgentToClient, id)
	if err != nil {
		return nil, err
	}
	open, err := wire.NewOpenerTag(tag, keys.ClientToAgent, id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(parent, srv.cfg.Limits.MaxDuration)
	lim, basis := srv.cfg.Limits, "--max-rate"
	if lim.MaxRateBitsPerSec <= 0 {
		lim.MaxRateBitsPerSec, basis = srv.rates.get(addrPort(c.LocalAddr()).Addr(), time.Now())
	}
	return &Session{
		ID: id, Keys: keys, Tag: tag, Limits: lim, RateBasis: basis, Software: software,
		srv: srv, conn: c, ctx: ctx, cancel: cancel, start: time.Now(),
		rate: newBucket(lim.MaxRateBitsPerSec / 8), seal: seal, open: open,
		kinds: map[string]int{}, values: map[string]any{},
	}, nil
}

// Context is cancelled when the session ends (client gone, MaxDuration
// passed, agent stopping).
func (s *Session) Context() context.Context { return s.ctx }

// Peer is the client's control address (authenticated by the handshake).
func (s *Session) Peer() netip.AddrPort { return addrPort(s.conn.RemoteAddr()) }

// LocalAddr is the agent's end of the control connection.
func (s *Session) LocalAddr() netip.AddrPort { return addrPort(s.conn.LocalAddr()) }

// Sealer tags what the agent sends in this session (AgentToClient key).
// One Sealer per session keeps sequence numbers unique across endpoints.
func (s *Session) Sealer() *wire.Sealer { return s.seal }

// Opener verifies what the client sends in this session (ClientToAgent
// key), with one replay window for the session.
func (s *Session) Opener() *wire.Opener { return s.open }

// Token is the agent's shared token, for handlers that act as a client of
// another agent (mesh). It never goes on the wire.
func (s *Session) Token() []byte { return s.srv.cfg.Token }

// AllowsCPULatency reports whether the agent lets sessions hold a
// CPU-latency request (Config.AllowCPULatency).
func (s *Session) AllowsCPULatency() bool { return s.srv.cfg.AllowCPULatency }

// Wait blocks until the session's rate limit allows sending n more bytes,
// or the session ends.
func (s *Session) Wait(ctx context.Context, n int) error {
	return s.rate.wait(ctx, s.ctx, n)
}

// Allow reports whether n bytes may be sent now, taking them if so; a
// sender that cannot wait (a responder answering a datagram) drops instead.
func (s *Session) Allow(n int) bool { return s.rate.allow(n) }

// RateHeld reports how the session's rate limit held its senders back so
// far: the total time Wait slept and how many sends Allow refused. A
// handler compares two readings to tell whether the limit shaped a run.
func (s *Session) RateHeld() (waited time.Duration, refused int64) {
	s.rate.mu.Lock()
	defer s.rate.mu.Unlock()
	return s.rate.waited, s.rate.refused
}

// AddEndpoint registers c to be closed when the session ends; it fails when
// the session already has MaxEndpoints endpoints or has ended.
func (s *Session) AddEndpoint(c io.Closer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return fmt.Errorf("session ended")
	}
	if len(s.endpoints) >= s.Limits.MaxEndpoints {
		return fmt.Errorf("session limit: at most %d data endpoints", s.Limits.MaxEndpoints)
	}
	s.endpoints = append(s.endpoints, c)
	return nil
}

// Store keeps v under key for later requests of the same session (a
// handler that opened an endpoint finds it again). Keys are namespaced by
// convention: "pmtu.conn <addr>", "bench. ...".
func (s *Session) Store(key string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[key] = v
}

// Load returns what Store kept under key, or nil.
func (s *Session) Load(key string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[key]
}

// CountIn and CountOut record data packets for the session's log line;
// CountDrop records a datagram that failed authentication.
func (s *Session) CountIn(bytes int) { s.PacketsIn.Add(1); s.BytesIn.Add(int64(bytes)) }

// CountOut: see CountIn.
func (s *Session) CountOut(bytes int) { s.PacketsOut.Add(1); s.BytesOut.Add(int64(bytes)) }

// CountDrop: see CountIn.
func (s *Session) CountDrop() { s.Dropped.Add(1) }

// CountTruncated counts a datagram read short.
func (s *Session) CountTruncated() { s.Truncated.Add(1) }

// serve reads requests until the session ends, then logs one line.
func (s *Session) serve() {
	defer s.close()
	go func() {
		// Unblock the reader when the session's time is up or the agent stops.
		<-s.ctx.Done()
		s.conn.SetReadDeadline(time.Now())
	}()
	for {
		m, err := wire.Read(s.conn)
		if err != nil {
			switch {
			case s.ctx.Err() == context.DeadlineExceeded:
				s.end = fmt.Sprintf("time limit %s reached", s.Limits.MaxDuration)
				wire.Write(s.conn, &wire.Refuse{Reason: s.end})
			case s.ctx.Err() != nil:
				s.end = "agent stopping"
				wire.Write(s.conn, &wire.Refuse{Reason: s.end})
			case errors.Is(err, io.EOF):
				s.end = "client disconnected"
			default:
				s.end = "dropped: " + oneLine(err.Error())
			}
			return
		}
		switch v := m.(type) {
		case *wire.Bye:
			s.end = "bye"
			return
		case *wire.Request:
			resp := s.dispatch(v)
			if err := wire.Write(s.conn, resp); err != nil {
				s.end = "write: " + oneLine(err.Error())
				return
			}
		default:
			s.end = fmt.Sprintf("protocol error: unexpected %T", m)
			wire.Write(s.conn, &wire.Refuse{Reason: s.end})
			return
		}
	}
}

func (s *Session) dispatch(req *wire.Request) (resp *wire.Response) {
	resp = &wire.Response{ID: req.ID}
	s.mu.Lock()
	s.kinds[req.Kind]++
	s.mu.Unlock()
	defer func() {
		if resp.Error != "" {
			s.logFailed(req.Kind, resp.Error)
		}
	}()
	h := handler(req.Kind)
	if h == nil {
		resp.Error = fmt.Sprintf("unknown request %q (agent supports: %s)", req.Kind, strings.Join(Kinds(), ", "))
		return resp
	}
	if err := s.ctx.Err(); err != nil {
		resp.Error = "session ended: " + err.Error()
		return resp
	}
	defer func() {
		if r := recover(); r != nil {
			resp.Body = nil
			resp.Error = fmt.Sprintf("internal error in %s: %v", req.Kind, r)
		}
	}()
	out, err := h(s.ctx, s, req.Body)
	if err != nil {
		resp.Error = truncate(oneLine(err.Error()), wire.MaxReasonLen)
		return resp
	}
	b, err := json.Marshal(out)
	if err != nil {
		resp.Error = "encode response: " + err.Error()
		return resp
	}
	resp.Body = b
	return resp
}

// maxFailedLines bounds the failed requests one session logs one by one;
// the session's last line counts them all.
const maxFailedLines = 10

// logFailed logs a request the agent answered with an error (a parameter
// it cannot honour, a failure), so the agent's log says why as well as
// the client.
func (s *Session) logFailed(kind, msg string) {
	s.mu.Lock()
	s.failed++
	n := s.failed
	s.mu.Unlock()
	if n <= maxFailedLines {
		s.srv.logf("session %016x from %s: %s failed: %s", s.ID, s.Peer(), termtext.Clean(kind), termtext.Clean(msg))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (s *Session) close() {
	s.cancel()
	s.mu.Lock()
	eps := s.endpoints
	s.endpoints = nil
	var kinds []string
	for k, n := range s.kinds {
		kinds = append(kinds, fmt.Sprintf("%s x%d", termtext.Clean(k), n))
	}
	failed := s.failed
	s.mu.Unlock()
	for _, c := range eps {
		c.Close()
	}
	sort.Strings(kinds)
	req := "none"
	if len(kinds) > 0 {
		req = strings.Join(kinds, ", ")
	}
	if failed > 0 {
		req += fmt.Sprintf(" (%d failed)", failed)
	}
	sw := s.Software
	if sw == "" {
		sw = "unknown client"
	}
	dropped := fmt.Sprint(s.Dropped.Load())
	if n := s.Truncated.Load(); n > 0 {
		dropped += fmt.Sprintf(", truncated %d (read short: larger than expected)", n)
	}
	s.srv.logf("session %016x from %s (%s): %s; requests: %s; data in %d pkts %s, out %d pkts %s, dropped %s; %s",
		s.ID, s.Peer(), sw, s.end, req,
		s.PacketsIn.Load(), units.FormatBytes(float64(s.BytesIn.Load())), s.PacketsOut.Load(), units.FormatBytes(float64(s.BytesOut.Load())), dropped,
		time.Since(s.start).Round(time.Millisecond))
}

func addrPort(a net.Addr) netip.AddrPort {
	switch v := a.(type) {
	case *net.TCPAddr:
		ap := v.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	case *net.UDPAddr:
		ap := v.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// bucket is a token bucket over bytes: the session's rate limit.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	burst  float64
	tokens float64
	last   time.Time
	// What the limit cost its senders: time Wait slept (the sleeps it
	// decided; concurrent senders each count theirs) and sends Allow
	// refused.
	waited  time.Duration
	refused int64
}

func newBucket(bytesPerSec float64) *bucket {
	// A burst of 10 ms of traffic, but at least a few jumbo frames, so
	// pacing does not turn single probes into waits.
	burst := max(bytesPerSec/100, 64<<10)
	return &bucket{rate: bytesPerSec, burst: burst, tokens: burst, last: time.Now()}
}

func (b *bucket) refill(now time.Time) {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

func (b *bucket) allow(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(time.Now())
	if b.tokens < float64(n) {
		b.refused++
		return false
	}
	b.tokens -= float64(n)
	return true
}

func (b *bucket) wait(ctx, sess context.Context, n int) error {
	b.mu.Lock()
	b.refill(time.Now())
	b.tokens -= float64(n) // may go negative: a debt paid by waiting
	var d time.Duration
	if b.tokens < 0 {
		d = time.Duration(-b.tokens / b.rate * float64(time.Second))
		b.waited += d
	}
	b.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-sess.Done():
		return fmt.Errorf("session ended: %w", sess.Err())
	}
}
