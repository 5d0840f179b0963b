package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

var testToken = []byte("test-token-0123456789abcdef")

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startAgent runs an agent on loopback and returns its address and log.
func startAgent(t *testing.T, limits wire.Limits) (string, *syncBuf) {
	t.Helper()
	log := &syncBuf{}
	srv, err := NewServer(Config{Token: testToken, Limits: limits, Software: "test agent", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String(), log
}

func dial(t *testing.T, addr string, tok []byte) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, tok, DialOptions{Software: "test client"})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestSessionAndInfo(t *testing.T) {
	addr, log := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if c.Session == 0 || c.Limits.MaxSessions != DefaultLimits.MaxSessions || c.Agent != "test agent" {
		t.Fatalf("welcome: %+v", c)
	}
	var info Info
	if err := c.Call(context.Background(), "agent.info", nil, &info); err != nil {
		t.Fatal(err)
	}
	if info.Peer != c.LocalAddr().String() || !strings.Contains(strings.Join(info.Kinds, ","), "agent.info") {
		t.Fatalf("info: %+v (client %s)", info, c.LocalAddr())
	}
	err = c.Call(context.Background(), "no.such.kind", nil, nil)
	var re *RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "unknown request") {
		t.Fatalf("unknown kind: %v", err)
	}
	c.Close()
	waitFor(t, func() bool { return strings.Contains(log.String(), "bye; requests: agent.info x1, no.such.kind x1") }, log)
}

func waitFor(t *testing.T, cond func() bool, log *syncBuf) {
	t.Helper()
	for range 3000 { // 30 s, only against a hang
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("condition never met; agent log:\n%s", log)
}

func TestWrongTokenRefused(t *testing.T) {
	addr, log := startAgent(t, wire.Limits{})
	_, err := dial(t, addr, []byte("another-token-0123456789abcdef"))
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("wrong token: %v", err)
	}
	waitFor(t, func() bool { return strings.Contains(log.String(), "refused by") }, log)

	// A client that skips checking the agent's proof and sends a bad proof
	// is refused by the agent with a reason.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, _ := wire.NewNonce()
	wire.Write(conn, &wire.Hello{Magic: wire.Magic, Version: wire.Version, Nonce: n})
	if _, err := wire.Read(conn); err != nil {
		t.Fatal(err)
	}
	wire.Write(conn, &wire.Auth{Proof: make([]byte, wire.ProofLen)})
	m, err := wire.Read(conn)
	if r, ok := m.(*wire.Refuse); !ok || !strings.Contains(r.Reason, "token does not match") {
		t.Fatalf("bad proof: %#v %v", m, err)
	}
}

func TestVersionRefused(t *testing.T) {
	addr, _ := startAgent(t, wire.Limits{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, _ := wire.NewNonce()
	wire.Write(conn, &wire.Hello{Magic: wire.Magic, Version: 99, Nonce: n})
	m, err := wire.Read(conn)
	if r, ok := m.(*wire.Refuse); !ok || !strings.Contains(r.Reason, "version 99 not supported") {
		t.Fatalf("version: %#v %v", m, err)
	}
}

func TestBusyAndGarbage(t *testing.T) {
	addr, log := startAgent(t, wire.Limits{MaxSessions: 1})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, addr, testToken); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("second session with MaxSessions 1: %v", err)
	}
	// Garbage on the control port: answered (at most) with a refusal, and
	// the live session is unharmed.
	for _, junk := range [][]byte{[]byte("GET / HTTP/1.0\r\n\r\n"), {6, 0xff, 0xff, 0xff, 0xff}, bytes.Repeat([]byte{0}, 100)} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(junk)
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 1024)
		n, _ := conn.Read(buf)
		if n > 0 && buf[0] != byte(wire.TRefuse) {
			t.Errorf("garbage %q answered with %q", junk, buf[:n])
		}
		conn.Close()
	}
	var info Info
	if err := c.Call(context.Background(), "agent.info", nil, &info); err != nil {
		t.Fatalf("session after garbage: %v", err)
	}
	if !strings.Contains(log.String(), "not an interlink client") {
		t.Errorf("log has no refusal for garbage:\n%s", log)
	}
}

func TestDurationLimit(t *testing.T) {
	t.Parallel() // waits out the limit on its own agent
	addr, log := startAgent(t, wire.Limits{MaxDuration: 300 * time.Millisecond})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	// The agent logs the limit when it ends the session: a call after
	// that fails.
	waitFor(t, func() bool { return strings.Contains(log.String(), "time limit 300ms reached") }, log)
	err = c.Call(context.Background(), "agent.info", nil, nil)
	if err == nil {
		t.Fatal("call after the session's time limit succeeded")
	}
}

// udpEndpointSession registers kind, whose handler opens a UDP endpoint in
// the session and serves it with serve, starts an agent, calls kind from a
// client and returns the client, a socket connected to the endpoint and
// the agent's log.
func udpEndpointSession(t *testing.T, kind string, serve func(ep *UDPEndpoint)) (*Client, *net.UDPConn, *syncBuf) {
	t.Helper()
	type opened struct {
		Port int `json:"port"`
	}
	registerTest(t, kind, func(ctx context.Context, s *Session, _ json.RawMessage) (any, error) {
		ep, err := s.ListenUDP(netip.Addr{})
		if err != nil {
			return nil, err
		}
		go serve(ep)
		return opened{Port: int(ep.LocalAddr().Port())}, nil
	})
	addr, log := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	var o opened
	if err := c.Call(context.Background(), kind, nil, &o); err != nil {
		t.Fatal(err)
	}
	u, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: o.Port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return c, u, log
}

func TestUDPEndpoint(t *testing.T) {
	// Parallel: it waits out windows in which nothing may come back, on
	// its own agent and request kind.
	t.Parallel()
	// A test kind that echoes authenticated datagrams with a header-only
	// reply, the way a responder must: never more than it received.
	eps := make(chan *UDPEndpoint, 1)
	c, u, log := udpEndpointSession(t, "test.udp", func(ep *UDPEndpoint) {
		eps <- ep
		buf := make([]byte, 65536)
		for {
			n, h, err := ep.Read(buf)
			if err != nil {
				return
			}
			if err := ep.Reply(n, make([]byte, wire.HeaderLen), wire.KindAck, h.Seq); err != nil {
				return
			}
		}
	})
	buf := make([]byte, 2048)
	// Unauthenticated: garbage, a packet sealed with the wrong key, and a
	// replay of a valid packet must get no reply.
	u.Write([]byte("hello?"))
	forged := make([]byte, 500)
	wire.NewSealer(c.Keys.AgentToClient, c.Session).SealPacket(forged, wire.KindProbe, 0)
	u.Write(forged)
	u.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := u.Read(buf); err == nil {
		t.Fatalf("unauthenticated datagram got a %d-byte reply", n)
	}
	good := make([]byte, 500)
	seq, _ := c.Sealer().SealPacket(good, wire.KindProbe, 0)
	u.Write(good)
	u.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := u.Read(buf)
	if err != nil {
		t.Fatalf("authenticated datagram: no reply: %v", err)
	}
	h, err := c.Opener().Open(buf[:n])
	if err != nil || h.Kind != wire.KindAck || h.Ref != seq || n > len(good) {
		t.Fatalf("reply: %d bytes %+v %v", n, h, err)
	}
	u.Write(good) // replay
	u.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := u.Read(buf); err == nil {
		t.Fatal("replayed datagram got a reply")
	}
	ep := <-eps
	if err := ep.Reply(10, make([]byte, 100), wire.KindAck, 0); err == nil {
		t.Fatal("Reply allowed amplification")
	}
	c.Close()
	waitFor(t, func() bool { return strings.Contains(log.String(), "dropped 3") }, log)
	if _, _, err := ep.Read(buf); err == nil {
		t.Fatal("endpoint still open after the session ended")
	}
}

func TestTCPEndpoint(t *testing.T) {
	ports := make(chan netip.AddrPort, 1)
	got := make(chan string, 2)
	registerTest(t, "test.tcp", func(ctx context.Context, s *Session, _ json.RawMessage) (any, error) {
		ep, err := s.ListenTCP(netip.Addr{})
		if err != nil {
			return nil, err
		}
		ports <- ep.LocalAddr()
		go func() {
			conn, h, err := ep.Accept(ctx)
			if err != nil {
				got <- "accept: " + err.Error()
				return
			}
			b := make([]byte, 5)
			conn.Read(b)
			got <- string(b) + " ref " + string(rune('0'+h.Ref))
			conn.Close()
		}()
		return nil, nil
	})
	addr, _ := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), "test.tcp", nil, nil); err != nil {
		t.Fatal(err)
	}
	ap := <-ports
	// An untagged stream is closed without reaching the handler.
	raw, err := net.Dial("tcp", ap.String())
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(bytes.Repeat([]byte("x"), wire.HeaderLen+5))
	raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := raw.Read(make([]byte, 1)); err == nil {
		t.Fatal("untagged stream not closed")
	}
	raw.Close()
	conn, err := c.DialTCP(context.Background(), ap, 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("hello"))
	if s := <-got; s != "hello ref 7" {
		t.Fatalf("stream: %q", s)
	}
	conn.Close()
}

func TestBucket(t *testing.T) {
	b := newBucket(1e6) // 1 MB/s, burst 64 KiB
	if !b.allow(60000) || b.allow(60000) {
		t.Fatal("burst not enforced")
	}
	start := time.Now()
	ctx := context.Background()
	for range 5 {
		b.wait(ctx, ctx, 20000)
	}
	// 100 kB at 1 MB/s with ~5 kB left in the bucket: about 95 ms.
	if d := time.Since(start); d < 70*time.Millisecond {
		t.Fatalf("rate not enforced: 100 kB in %s", d)
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1": "10.0.0.1:7471", "10.0.0.1:9": "10.0.0.1:9", "fd00::1": "[fd00::1]:7471",
		"[fd00::1]": "[fd00::1]:7471", "[fd00::1]:9": "[fd00::1]:9", "node1": "node1:7471",
	} {
		if got, err := HostPort(in); err != nil || got != want {
			t.Errorf("HostPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// Typos are errors, not host names to look up or agents "not running".
	for _, in := range []string{"", "[::1", "::1]", "[node1]", "[::1]:x", "10.0.0.1:9:x", "10.0.0.1:65536",
		"10.0.0.1:-1", "10.0.0.1:", "10.0.0.1:09", "[10.0.0.1:9]"} {
		if got, err := HostPort(in); err == nil {
			t.Errorf("HostPort(%q) = %q, want an error", in, got)
		}
	}
}

func TestPMTULoopback(t *testing.T) {
	addr, log := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := c.PMTU(ctx, PMTUOptions{Probe: ProbeOptions{Max: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Direction != "forward" || rs[1].Direction != "reverse" {
		t.Fatalf("results: %+v", rs)
	}
	for _, r := range rs {
		if r.Verdict != "ok" || r.PathMTU != 9000 || r.PeerMTU != 65536 {
			t.Errorf("%s: %+v", r.Direction, r)
		}
	}
	// pmtu.peer: the agent tests the path to another agent (itself here).
	var peer []struct {
		Direction string `json:"direction"`
		Verdict   string `json:"verdict"`
		PathMTU   int    `json:"path_mtu"`
	}
	if err := c.Call(ctx, KindPMTUPeer, PMTUPeer{Agent: addr, Target: "127.0.0.1", Options: ProbeOptions{Max: 1500}}, &peer); err != nil {
		t.Fatal(err)
	}
	if len(peer) != 2 || peer[0].PathMTU != 1500 || peer[1].PathMTU != 1500 {
		t.Fatalf("pmtu.peer: %+v", peer)
	}
	c.Close()
	waitFor(t, func() bool { return strings.Count(log.String(), "pmtu.open x1") >= 2 }, log)
	t.Log(log.String())
}
