//go:build linux

package labtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
)

// Traffic helpers for the lab tests: raw Go sockets opened inside nodes with
// Node.Do, since there is no ping binary here.

// udpListen opens a UDP socket in node n bound to addr and returns it with
// its port.
func udpListen(t *testing.T, n *lab.Node, addr netip.Addr) (int, int) {
	t.Helper()
	var fd, port int
	err := n.Do(func() error {
		var err error
		fd, err = unix.Socket(family(addr), unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, sockaddr(addr, 0)); err != nil {
			unix.Close(fd)
			return err
		}
		sa, err := unix.Getsockname(fd)
		if err != nil {
			unix.Close(fd)
			return err
		}
		port = sockPort(sa)
		return nil
	})
	if err != nil {
		t.Fatalf("udp listen in %s on %s: %v", n.Name(), addr, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, port
}

// probe is what happened to one DF datagram.
type probe struct {
	sendErr  error                  // the error of send itself (EMSGSIZE: the own interface is smaller)
	arrived  bool                   // the receiver got it, whole
	icmp     []unix.SockExtendedErr // what came back on the sender's error queue
	received int                    // its size at the receiver
}

// sendDF sends one UDP datagram with payload bytes from node `from` to
// dst:port with DF set (IP_PMTUDISC_PROBE: ignore the cached path MTU, never
// fragment) and IP_RECVERR on, then reports whether the listener rfd got
// it within wait and what ICMP errors reached the sender's error queue.
func sendDF(t *testing.T, from *lab.Node, dst netip.Addr, port, rfd, payload int, wait time.Duration) probe {
	t.Helper()
	var p probe
	var sfd int
	err := from.Do(func() error {
		var err error
		sfd, err = unix.Socket(family(dst), unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if dst.Is4() {
			err = unix.SetsockoptInt(sfd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
			if err == nil {
				err = unix.SetsockoptInt(sfd, unix.IPPROTO_IP, unix.IP_RECVERR, 1)
			}
		} else {
			err = unix.SetsockoptInt(sfd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
			if err == nil {
				err = unix.SetsockoptInt(sfd, unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
			}
		}
		if err != nil {
			return err
		}
		return unix.Connect(sfd, sockaddr(dst, port))
	})
	if err != nil {
		t.Fatalf("udp socket in %s: %v", from.Name(), err)
	}
	defer unix.Close(sfd)
	// Drain anything a previous probe left at the receiver.
	buf := make([]byte, 65536)
	for {
		if _, _, err := unix.Recvfrom(rfd, buf, unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	msg := make([]byte, payload)
	for i := range msg {
		msg[i] = byte(i)
	}
	_, p.sendErr = unix.Write(sfd, msg)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && !p.arrived {
		n, _, err := unix.Recvfrom(rfd, buf, unix.MSG_DONTWAIT)
		if err == nil {
			p.arrived, p.received = n == payload, n
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// ICMP errors come back within a round trip; give them a moment even
	// when the datagram arrived.
	time.Sleep(50 * time.Millisecond)
	p.icmp = errQueue(t, sfd)
	return p
}

// errQueue drains a socket's error queue (IP_RECVERR/IPV6_RECVERR).
func errQueue(t *testing.T, fd int) []unix.SockExtendedErr {
	t.Helper()
	var out []unix.SockExtendedErr
	for {
		buf := make([]byte, 65536)
		oob := make([]byte, 1024)
		_, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("read error queue: %v", err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			t.Fatalf("parse control message: %v", err)
		}
		for _, m := range msgs {
			if (m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) ||
				(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
				var ee unix.SockExtendedErr
				if len(m.Data) < int(unsafe.Sizeof(ee)) {
					t.Fatalf("short extended error: %d bytes", len(m.Data))
				}
				ee = *(*unix.SockExtendedErr)(unsafe.Pointer(&m.Data[0]))
				out = append(out, ee)
			}
		}
	}
}

// reach proves that node `from` reaches addr (an address of node `to`) over
// TCP: it connects and gets an echo back.
func reach(t *testing.T, from, to *lab.Node, addr netip.Addr) error {
	t.Helper()
	ln, err := tcpListen(to, addr, nil)
	if err != nil {
		return err
	}
	defer ln.Close()
	acceptOnce(ln, 3*time.Second, func(c net.Conn) { io.CopyN(c, c, 5) })
	port := ln.Addr().(*net.TCPAddr).Port
	var c net.Conn
	err = from.Do(func() error {
		var err error
		c, err = net.DialTimeout("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(port)), 3*time.Second)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s -> %s (%s): %w", from.Name(), addr, to.Name(), err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("hello")); err != nil {
		return fmt.Errorf("%s -> %s: write: %w", from.Name(), addr, err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "hello" {
		return fmt.Errorf("%s -> %s: echo %q: %v", from.Name(), addr, got, err)
	}
	return nil
}

func family(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

func sockaddr(a netip.Addr, port int) unix.Sockaddr {
	if a.Is4() {
		return &unix.SockaddrInet4{Port: port, Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: port, Addr: a.As16()}
}

func sockPort(sa unix.Sockaddr) int {
	switch s := sa.(type) {
	case *unix.SockaddrInet4:
		return s.Port
	case *unix.SockaddrInet6:
		return s.Port
	}
	return 0
}

// tcpSend connects from node `from` to addr (on node `to`) and sends size
// bytes, with the MSS clamped to mss when it is not zero. It returns how
// many bytes the receiver got before the transfer finished or timeout ran
// out.
func tcpSend(t *testing.T, from, to *lab.Node, addr netip.Addr, mss, size int, timeout time.Duration) int64 {
	t.Helper()
	control := func(network, address string, c syscall.RawConn) error {
		if mss == 0 {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss)
		})
		if err != nil {
			return err
		}
		return serr
	}
	ln, err := tcpListen(to, addr, control)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(timeout))
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var c net.Conn
	err = from.Do(func() error {
		var err error
		d := net.Dialer{Timeout: timeout, Control: control}
		c, err = d.Dial("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)))
		return err
	})
	if err != nil {
		t.Fatalf("connect %s -> %s: %v", from.Name(), addr, err)
	}
	c.SetDeadline(time.Now().Add(timeout))
	c.Write(make([]byte, size))
	c.Close()
	return <-got
}

// linkRate streams TCP from node `from` to addr (on node `to`, link ifname)
// for settle+window and returns the rate at which bytes arrived on the
// receiver's link during window, in bits per second, from the kernel's
// interface counters: the test's own scheduling on a busy machine does not
// enter the figure.
func linkRate(t *testing.T, from, to *lab.Node, addr netip.Addr, ifname string, settle, window time.Duration) float64 {
	t.Helper()
	ln, err := tcpListen(to, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acceptOnce(ln, settle+window+5*time.Second, func(c net.Conn) { io.Copy(io.Discard, c) })
	var h *netlink.Handle
	if err := to.Do(func() error {
		var err error
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sample := func() (uint64, time.Time) {
		before := time.Now()
		l, err := h.LinkByName(ifname)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		return l.Attrs().Statistics.RxBytes, before.Add(after.Sub(before) / 2)
	}
	var c net.Conn
	err = from.Do(func() error {
		var err error
		c, err = net.DialTimeout("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), 2*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("connect %s -> %s: %v", from.Name(), addr, err)
	}
	defer c.Close()
	stop := time.Now().Add(settle + window + 200*time.Millisecond)
	go func() {
		buf := make([]byte, 64<<10)
		c.SetWriteDeadline(stop)
		for time.Now().Before(stop) {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	time.Sleep(settle)
	b0, t0 := sample()
	time.Sleep(window)
	b1, t1 := sample()
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

// tcpListen opens a TCP listener in node n on addr, port chosen by the
// kernel; control, when not nil, sets socket options first.
func tcpListen(n *lab.Node, addr netip.Addr, control func(string, string, syscall.RawConn) error) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() error {
		var err error
		lc := net.ListenConfig{Control: control}
		ln, err = lc.Listen(context.Background(), "tcp", net.JoinHostPort(addr.String(), "0"))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen in %s on %s: %w", n.Name(), addr, err)
	}
	return ln, nil
}

// acceptOnce serves one connection of ln with fn in a goroutine, bounded by
// d, and closes it afterwards.
func acceptOnce(ln net.Listener, d time.Duration, fn func(net.Conn)) {
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(d))
		fn(c)
	}()
}
