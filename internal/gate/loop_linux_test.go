package gate

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAcceptedSocketsInheritOptions: a route's listener gets TCP_NODELAY
// and the keep-alive options before listen (listenConfig), and the loop
// relies on Linux copying them into every accepted socket.
func TestAcceptedSocketsInheritOptions(t *testing.T) {
	lfd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(lfd)
	setSockopts(lfd, sockopts[:]...)
	if err := syscall.Bind(lfd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(lfd, 8); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(lfd)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fd, _, err := syscall.Accept4(lfd, syscall.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for _, o := range sockopts {
		if v, err := syscall.GetsockoptInt(fd, o[0], o[1]); err != nil || v != o[2] {
			t.Errorf("accepted socket option %d/%d = %d, %v; the listener has %d", o[0], o[1], v, err, o[2])
		}
	}
}

// TestDialTimeout: an upstream that never answers the connect (its accept
// queue is full, so its SYNs are dropped) closes the client after the
// dial timeout, counted, with the slot back.
func TestDialTimeout(t *testing.T) {
	lfd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(lfd)
	syscall.Bind(lfd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	if err := syscall.Listen(lfd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(lfd)
	up := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for i := 0; i < 2; i++ { // fill its accept queue (never accepted)
		if c, err := net.DialTimeout("tcp", up, 200*time.Millisecond); err == nil {
			defer c.Close()
		}
	}
	if c, err := net.DialTimeout("tcp", up, 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel completes connects to a full accept queue; no way to make a dial hang on loopback")
	}
	g, addr := startGate(t, "loop", Route{Upstream: up, Limits: Limits{RatePerSec: 1000, Burst: 10, DialTimeout: 300 * time.Millisecond}})
	c := dialFrom(t, "127.0.0.1", addr)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("read %d bytes, %v; want EOF", n, err)
	}
	// The close is the dial timeout's: the upstream never accepts, so the
	// one upstream error counted is the dial that gave up.
	waitFor(t, func() bool { return testutil.ToFloat64(g.m.upstreamErrors.WithLabelValues("db")) == 1 })
	if v := testutil.ToFloat64(g.m.inflight.WithLabelValues("db")); v != 0 {
		t.Errorf("%v handshakes in flight after the dial timed out", v)
	}
}

// TestLoopKeepsNoDescriptors: sockets and pipes of finished connections
// are all closed (the loop keeps a few idle pipes, no more).
func TestLoopKeepsNoDescriptors(t *testing.T) {
	u := newUpstream(t)
	_, addr := startGate(t, "loop", Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 1e6, Burst: 1000}})
	roundTrip(t, dialFrom(t, "127.0.0.1", addr), "warm")
	before := openFiles(t)
	for i := 0; i < 300; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, c, "ping")
		c.Close()
	}
	waitFor(t, func() bool { return openFiles(t) <= before+2*idlePipes })
}

func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); !strings.HasPrefix(l, "anon_inode:") {
			n++
		}
	}
	return n
}

// TestUpstreamByNameKeepsResolver: an upstream given by name is dialled
// through the resolver, connection by connection, so the route runs
// without the event loop (which dials addresses only).
func TestUpstreamByNameKeepsResolver(t *testing.T) {
	u := newUpstream(t)
	_, port, _ := net.SplitHostPort(u.ln.Addr().String())
	g, addr := startGate(t, "loop", Route{Upstream: net.JoinHostPort("localhost", port), Limits: Limits{RatePerSec: 1000, Burst: 10}})
	if got := roundTrip(t, dialFrom(t, "127.0.0.1", addr), "by name"); got != "by name" {
		t.Errorf("echo %q", got)
	}
	r := g.routes["db"]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wakeLoop != nil {
		t.Error("a route to an upstream given by name runs the event loop")
	}
}

// TestLoopSocketOptions: both of the loop's sockets of a connection have
// the options net.Dial and Accept would give them: the client's inherited
// from the listener, the upstream's set right after its connect, before
// any byte is forwarded (see proxy). So they are checked once, as soon as
// the client has its echo: no waiting for them to settle.
func TestLoopSocketOptions(t *testing.T) {
	u := newUpstream(t)
	_, addr := startGate(t, "loop", Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 1000, Burst: 10}})
	c := dialFrom(t, "127.0.0.1", addr)
	roundTrip(t, c, "hold")
	for _, p := range gateSocketOptions(t, addr, c.LocalAddr().String(), u.ln.Addr().String()) {
		t.Error(p)
	}
}

// gateSocketOptions finds the gate's sockets of one connection among this
// process's descriptors (the client's: on addr, from client; the
// upstream's: to up) and returns what is wrong with their options.
func gateSocketOptions(t *testing.T, addr, client, up string) []string {
	t.Helper()
	found := map[string]bool{}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, e := range ents {
		var fd int
		fmt.Sscan(e.Name(), &fd)
		local, err1 := syscall.Getsockname(fd)
		peer, err2 := syscall.Getpeername(fd)
		if err1 != nil || err2 != nil {
			continue
		}
		var side string
		switch {
		case sockaddrString(local) == addr && sockaddrString(peer) == client:
			side = "client"
		case sockaddrString(peer) == up:
			side = "upstream"
		default:
			continue
		}
		found[side] = true
		for _, o := range sockopts {
			if v, err := syscall.GetsockoptInt(fd, o[0], o[1]); err != nil || v != o[2] {
				problems = append(problems, fmt.Sprintf("%s socket: option %d/%d = %d, %v; want %d", side, o[0], o[1], v, err, o[2]))
			}
		}
	}
	if !found["client"] || !found["upstream"] {
		problems = append(problems, fmt.Sprintf("found the gate's sockets %v, want client and upstream", found))
	}
	return problems
}

func sockaddrString(sa syscall.Sockaddr) string {
	if a, ok := sa.(*syscall.SockaddrInet4); ok {
		return fmt.Sprintf("%d.%d.%d.%d:%d", a.Addr[0], a.Addr[1], a.Addr[2], a.Addr[3], a.Port)
	}
	return ""
}
