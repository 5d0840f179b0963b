package cluster

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/casetest"
)

// sshServer is an SSH server on loopback whose connections can stop
// reading: the client's writes then fill the socket buffers (kept small)
// and block in the kernel, as on a path that drops what is sent. Its
// commands: "count" reads stdin to its end and prints how many bytes came;
// "stall" stops reading the connection; "silent" sends nothing, ever.
type sshServer struct {
	addr    string
	release chan struct{} // closed at the end: stopped reads return
}

func newSSHServer(t *testing.T) *sshServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true}
	cfg.AddHostKey(hk)
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<10) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sshServer{addr: ln.Addr().String(), release: make(chan struct{})}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); close(s.release); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { defer conns.Done(); s.serve(&gateConn{Conn: c, release: s.release}, cfg) }()
		}
	}()
	return s
}

// gateConn is the server's side of a connection; after stop, its reads
// wait for release.
type gateConn struct {
	net.Conn
	release chan struct{}
	mu      sync.Mutex
	stopped bool
}

func (g *gateConn) Read(p []byte) (int, error) {
	g.mu.Lock()
	stopped := g.stopped
	g.mu.Unlock()
	if stopped {
		<-g.release
		return 0, io.EOF
	}
	return g.Conn.Read(p)
}

func (g *gateConn) stop() { g.mu.Lock(); g.stopped = true; g.mu.Unlock() }

func (s *sshServer) serve(c *gateConn, cfg *ssh.ServerConfig) {
	defer c.Close()
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for r := range creqs {
				var exec struct{ Cmd string }
				if r.Type != "exec" || ssh.Unmarshal(r.Payload, &exec) != nil {
					r.Reply(false, nil)
					continue
				}
				r.Reply(true, nil)
				switch exec.Cmd {
				case "count":
					go func() {
						n, _ := io.Copy(io.Discard, ch)
						fmt.Fprintf(ch, "%d\n", n)
						ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
						ch.Close()
					}()
				case "stall":
					c.stop()
				}
			}
		}()
	}
}

// dialTest makes a link to the server with a small send buffer.
func dialTest(t *testing.T, s *sshServer) *link {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	tcp := c.(*net.TCPConn)
	tcp.SetWriteBuffer(16 << 10)
	l, err := newLink(tcp, s.addr, &ssh.ClientConfig{User: "t", HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// The mechanism of issue 27: a write stuck on a full TCP window holds the
// channel's write lock, so Session.Close blocks behind it; cutting the
// link (closing the TCP connection) unblocks both.
func TestCutUnblocksSessionClose(t *testing.T) {
	t.Parallel() // bound by waiting; each test has its own server and link
	l := dialTest(t, newSSHServer(t))
	s, err := l.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s.Stdin = strings.NewReader(strings.Repeat("x", 8<<20))
	if err := s.Start("stall"); err != nil {
		t.Fatal(err)
	}
	waitStuck(t, l) // the stdin copy fills the buffers and blocks in a write
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
		t.Fatal("Session.Close returned while a write was stuck: the test does not hold the write lock as issue 27 did")
	case <-time.After(500 * time.Millisecond): // unblocked, Close returns in microseconds
	}
	t0 := time.Now()
	l.cut(errors.New("test cut"))
	select {
	case <-closed:
		t.Logf("Session.Close returned %s after the cut", time.Since(t0).Round(time.Microsecond))
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("Session.Close never returned after the link was cut")
	}
	if err := s.Wait(); err == nil {
		t.Error("the session ended without an error")
	}
}

// waitStuck waits until l's send queue holds data and its state stops
// changing (the last ACKs arrived; a write on it is blocked), and returns
// that state.
func waitStuck(t *testing.T, l *link) tcpState {
	t.Helper()
	var last tcpState
	for i := 0; i < 1500; i++ { // 30 s, only against a hang
		time.Sleep(20 * time.Millisecond)
		st, ok := readTCPState(l)
		if !ok {
			t.Fatal("no tcp state")
		}
		if st.Queued > 0 && st == last {
			return st
		}
		last = st
	}
	t.Fatalf("the link's send queue never stood still: %+v", last)
	return last
}

// A run whose ctx ends while its stdin is stuck returns at once, with the
// transfer's standstill reported with the end.
func TestRunEndsWithCtx(t *testing.T) {
	// note stands for stallNote (3 s) so the test need not wait 5 s: the
	// run ends (at 1 s) well after the copy stood still for note, as a
	// --timeout 5s would 2 s after a copy stood still for stallNote. The
	// stall timeout is past the run's end (the watchdog does not fire) and
	// short enough that the watchdog samples the transfer every 375 ms:
	// standing still is seen between samples. That the ctx ended it is its
	// cause in the error, not a time.
	const note, stall, after = 300 * time.Millisecond, 1500 * time.Millisecond, time.Second
	n := &node{link: dialTest(t, newSSHServer(t)), stall: stall, note: note, res: &NodeResult{}}
	end := errors.New("--timeout 1s reached")
	ctx, cancel := context.WithTimeoutCause(context.Background(), after, end)
	defer cancel()
	t0 := time.Now()
	_, err := n.must(ctx, "copy binary", "stall", make([]byte, 8<<20))
	took := time.Since(t0)
	t.Logf("returned %s after the start: %v", took.Round(time.Millisecond), err)
	var se *stallError
	if !errors.As(err, &se) || !errors.Is(se.stopped, end) || se.Idle < note {
		t.Fatalf("error %v, want the ctx's cause with the transfer standing still", err)
	}
	if n.link.cutBy() == nil {
		t.Error("the link was not cut")
	}
	if (&node{}).stillNote() != stallNote {
		t.Errorf("a node without note reports a stall after %s, want stallNote %s", (&node{}).stillNote(), stallNote)
	}
}

// The watchdog: a copy the node stops taking, and a fetch from a node
// that sends nothing, are each cut off after the stall timeout; a copy
// that moves is not. The three wait in parallel, each on its own link.
func TestStallWatchdog(t *testing.T) {
	t.Parallel()
	srv := newSSHServer(t)
	payload := make([]byte, 8<<20)
	// Loopback fills the buffers in milliseconds; half a second of
	// standing still is a stall here as 30 s are on a real path.
	const stall = 500 * time.Millisecond

	cases := []struct {
		name string
		f    func(t *testing.T)
	}{
		{"moving", func(t *testing.T) {
			n := &node{link: dialTest(t, srv), stall: 2 * time.Second, res: &NodeResult{}}
			out, err := n.must(context.Background(), "copy binary", "count", payload)
			if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint(len(payload)) {
				t.Fatalf("a copy that moves: %q, %v", out, err)
			}
		}},
		{"not reading", func(t *testing.T) {
			n := &node{link: dialTest(t, srv), stall: stall, res: &NodeResult{}}
			t0 := time.Now()
			_, err := n.must(context.Background(), "copy binary", "stall", payload)
			var se *stallError
			if !errors.As(err, &se) {
				t.Fatalf("copy to a node that stopped reading: %v, want a stall", err)
			}
			t.Logf("cut off after %s: %v", time.Since(t0).Round(time.Millisecond), err)
			// The server's kernel acknowledged what fits its buffer; its window
			// then stayed closed: not a blackhole.
			if se.Step != "copy binary" || se.Likely != LikelyNotReading || se.TotalBytes != int64(len(payload)) ||
				se.Bytes <= 0 || se.Bytes >= se.TotalBytes || se.Idle < stall || se.To != "127.0.0.1" {
				t.Errorf("stall %+v", se.Stall)
			}
			if !strings.HasPrefix(err.Error(), "copy binary: transfer stopped moving at ") {
				t.Errorf("error %q", err)
			}
		}},
		{"silent", func(t *testing.T) {
			n := &node{link: dialTest(t, srv), stall: stall, res: &NodeResult{}}
			_, err := n.mustRun(context.Background(), "fetch bundle", "silent", newTransfer("fetch bundle", nil, n.link))
			var se *stallError
			if !errors.As(err, &se) || se.Likely != LikelyBlackhole || se.Bytes != 0 || se.TotalBytes != 0 {
				t.Fatalf("fetch from a node that sends nothing: %v", err)
			}
			if !strings.Contains(err.Error(), "likely an MTU blackhole on the management path (large segments dropped); check the path MTU to 127.0.0.1") {
				t.Errorf("error %q", err)
			}
			n.fail(context.Background(), err)
			if n.res.Status != StatusFailed || n.res.Cause != CauseStall || n.res.Stall == nil {
				t.Errorf("node result %+v", n.res)
			}
		}},
	}
	casetest.AtOnce(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, i int) { cases[i].f(t) })
}
