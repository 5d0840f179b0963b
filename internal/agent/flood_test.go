package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/casetest"
	"github.com/interlink/interlink/internal/wire"
)

// startServer runs an agent with cfg (Token and Log filled in) on
// 127.0.0.1 and returns its address, its log and a stop function that
// returns once Serve has (so the log is final); stop also runs at cleanup.
func startServer(t *testing.T, cfg Config) (*Server, string, *syncBuf, func()) {
	t.Helper()
	log := &syncBuf{}
	cfg.Token, cfg.Log = testToken, log
	srv, err := NewServer(cfg)
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
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, ln.Addr().String(), log, stop
}

// dialFrom opens a TCP connection to addr from the loopback source src
// (127.0.0.1 and 127.0.0.2 are different sources to the agent).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	return c
}

func dialOpt(src string) DialOptions {
	return DialOptions{Software: "test client", Dial: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}
}

// Item 1 of issue 18: idle connections that never send a byte used to fill
// every handshake slot, and legitimate clients failed with EOF.
func TestIdleFloodFromOneAddress(t *testing.T) {
	srv, addr, log, _ := startServer(t, Config{MaxPendingPerSource: 4, MaxPending: 16, HandshakeDeadline: time.Second})
	// 200 idle connections from 127.0.0.1, held open.
	const idle = 200
	conns := make([]net.Conn, 0, idle)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range idle {
		conns = append(conns, dialFrom(t, "127.0.0.1", addr))
	}
	waitFor(t, func() bool { return srv.Pending() == 4 }, log)

	// A client from another address gets its session, not a refusal: the
	// flood holds 4 of the 16 slots, not all of them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // only against a hang
	defer cancel()
	c, err := Dial(ctx, addr, testToken, dialOpt("127.0.0.2"))
	if err != nil {
		t.Fatalf("client from 127.0.0.2 during the flood: %v", err)
	}
	c.Close()

	// A client sharing the flooder's address reads why it is refused.
	_, err = Dial(ctx, addr, testToken, dialOpt("127.0.0.1"))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "agent busy: 4 pending handshakes from your address") {
		t.Fatalf("client from the flooding address: %v", err)
	}
	// So does every idle connection over the cap (without sending a byte).
	conns[idle-1].SetReadDeadline(time.Now().Add(2 * time.Second))
	if m, err := wire.Read(conns[idle-1]); err != nil || !strings.Contains(m.(*wire.Refuse).Reason, "agent busy") {
		t.Fatalf("idle connection over the cap: %#v %v", m, err)
	}
	// The four admitted ones are refused at the handshake deadline, with
	// the reason, and their slots come back.
	conns[0].SetReadDeadline(time.Now().Add(3 * time.Second))
	if m, err := wire.Read(conns[0]); err != nil || !strings.Contains(m.(*wire.Refuse).Reason, "handshake timeout: no hello within 1s") {
		t.Fatalf("idle admitted connection: %#v %v", m, err)
	}
	waitFor(t, func() bool { return srv.Pending() == 0 }, log)
	if _, err := dial(t, addr, testToken); err != nil {
		t.Fatalf("client from 127.0.0.1 after the flood: %v", err)
	}
}

// The total cap binds floods from many addresses; a refusal names it.
func TestPendingTotalCap(t *testing.T) {
	srv, addr, log, _ := startServer(t, Config{MaxPendingPerSource: 2, MaxPending: 4})
	for i := 1; i <= 2; i++ {
		for range 2 {
			c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), addr)
			t.Cleanup(func() { c.Close() })
		}
	}
	waitFor(t, func() bool { return srv.Pending() == 4 }, log)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := Dial(ctx, addr, testToken, dialOpt("127.0.0.3"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "agent busy: 4 pending handshakes (limit 4)") {
		t.Fatalf("fifth handshake: %v", err)
	}
	if _, err := NewServer(Config{Token: testToken, MaxPendingPerSource: 8, MaxPending: 4}); err == nil {
		t.Error("a total cap below the per-address cap was accepted")
	}
}

// Item 2 of issue 18: every garbage connection wrote a log line.
func TestGarbageFloodLogBounded(t *testing.T) {
	_, addr, log, stop := startServer(t, Config{})
	// Twenty times the bound on the lines (an agent that logged each would
	// write 2000): enough to show the bound, a fifth of the CPU of 10000.
	const total = 2000
	var done, failed atomic.Int64
	deadline := time.Now().Add(90 * time.Second)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			junk := []byte("GET / HTTP/1.0\r\n\r\n")
			for done.Add(1) <= total && time.Now().Before(deadline) {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					failed.Add(1)
					continue
				}
				c.Write(junk)
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				io.Copy(io.Discard, c)
				c.Close()
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d connections could not be made", f, total)
	}
	if time.Now().After(deadline) {
		t.Fatalf("%d garbage connections did not finish in 90s", total)
	}
	stop() // writes the last summary
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) >= 100 {
		t.Fatalf("%d garbage connections wrote %d log lines:\n%s", total, len(lines), strings.Join(lines[:20], "\n"))
	}
	// Every connection is accounted for: one line each while the budget
	// lasts, then counted in a summary by source and reason.
	sum := regexp.MustCompile(`unauthenticated peers: (\d+) connections not logged one by one in the last \S+: 127\.0\.0\.1 (\d+) \(`)
	seen := 0
	for _, l := range lines {
		if m := sum.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			seen += n
			if !strings.Contains(l, "not an interlink client") {
				t.Errorf("summary has no reason: %s", l)
			}
		} else if strings.Contains(l, "refused 127.0.0.1:") {
			seen++
		} else {
			t.Errorf("unexpected log line: %s", l)
		}
	}
	if seen != total {
		t.Errorf("log accounts for %d of %d connections:\n%s", seen, total, log)
	}
	t.Logf("%d garbage connections: %d log lines; last:\n%s", total, len(lines), lines[len(lines)-1])
}

// Item 7 of issue 18: an empty auth proof got EOF instead of a reason;
// every pre-auth failure the peer can still read gets one.
func TestPreauthRefusalsCarryReasons(t *testing.T) {
	t.Parallel() // waits for the handshake deadline on its own agent
	_, addr, log, _ := startServer(t, Config{HandshakeDeadline: 500 * time.Millisecond})
	hello := func(c net.Conn) {
		n, _ := wire.NewNonce()
		if err := wire.Write(c, &wire.Hello{Magic: wire.Magic, Version: wire.Version, Nonce: n}); err != nil {
			t.Fatal(err)
		}
		if m, err := wire.Read(c); err != nil {
			t.Fatalf("challenge: %#v %v", m, err)
		}
	}
	cases := []struct {
		name string
		send func(c net.Conn)
		want string
	}{
		{"empty proof", func(c net.Conn) { hello(c); wire.WriteFrame(c, wire.TAuth, []byte(`{"proof":""}`)) }, "protocol error: bad auth message: decode auth: proof is 0 bytes, want 32"},
		{"no proof", func(c net.Conn) { hello(c); wire.WriteFrame(c, wire.TAuth, []byte(`{}`)) }, "proof is 0 bytes"},
		{"bye for auth", func(c net.Conn) { hello(c); wire.Write(c, &wire.Bye{}) }, "protocol error: expected auth, got bye"},
		{"no auth in time", func(c net.Conn) { hello(c) }, "handshake timeout: no auth within 500ms"},
		{"no hello in time", func(c net.Conn) {}, "handshake timeout: no hello within 500ms"},
		{"garbage", func(c net.Conn) { c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")) }, "not an interlink client"},
		{"request first", func(c net.Conn) { wire.Write(c, &wire.Request{ID: 1, Kind: "agent.info"}) }, "protocol error: expected hello, got request"},
	}
	// The cases wait for the handshake deadline at once, each from its
	// own loopback address (the per-address cap is not what is tested).
	casetest.AtOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) {
		tc := cases[i]
		c := dialFrom(t, fmt.Sprintf("127.0.1.%d", i+1), addr)
		defer c.Close()
		tc.send(c)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		m, err := wire.Read(c)
		r, ok := m.(*wire.Refuse)
		if !ok || !strings.Contains(r.Reason, tc.want) {
			t.Fatalf("got %#v %v, want a refusal with %q", m, err, tc.want)
		}
	})
	waitFor(t, func() bool { return strings.Contains(log.String(), "no auth within 500ms") }, log)
}

// Strings from a peer reach the terminal through termtext.Clean.
func TestPeerTextCleaned(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		wire.Read(c)
		wire.Write(c, &wire.Refuse{Reason: "\x1b]0;PWNED\x07\x1b[2Jgo away"})
	}()
	_, err = dial(t, ln.Addr().String(), testToken)
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), `\e]0;PWNED\x07\e[2Jgo away`) {
		t.Fatalf("refusal from a hostile agent: %q", err)
	}
	if e := (&RemoteError{Kind: "x", Msg: "a\x1b[2Jb"}).Error(); strings.Contains(e, "\x1b") {
		t.Fatalf("remote error: %q", e)
	}
}
