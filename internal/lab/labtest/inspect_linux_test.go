//go:build linux

package labtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
)

// TestInspect: status reads MTUs, port MTUs, rates, addresses and routes
// back from the kernel, and reports what was changed behind its back.
func TestInspect(t *testing.T) {
	l := up(t, "rac", "inspect")
	s, err := lab.Inspect(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	if s.State != lab.StateUp || len(s.Problems) != 0 || len(s.Nodes) != 2 || len(s.Switches) != 2 {
		t.Fatalf("status %+v", s)
	}
	eth1 := s.Nodes[1].Links[1]
	if eth1.Name != "eth1" || eth1.MTU != 9000 || eth1.PortMTU != 9000 || eth1.State != "up" ||
		len(eth1.Addresses) != 2 || eth1.Addresses[0].String() != "198.18.10.2/24" || eth1.Addresses[1].String() != "fd00:10::2/64" {
		t.Errorf("node2 eth1 %+v", eth1)
	}
	// Change the lab behind its back: status notices.
	n1 := node(t, l, "node1")
	err = n1.Do(func() error {
		link, err := netlink.LinkByName("eth1")
		if err != nil {
			return err
		}
		return netlink.LinkSetMTU(link, 1500)
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err = lab.Inspect(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	if s.State != lab.StateDamaged || len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "node node1 link eth1 has MTU 1500, topology says 9000") {
		t.Errorf("after changing node1's MTU: state %s, problems %q", s.State, s.Problems)
	}

	for _, c := range []struct {
		builtin, node string
		mtu, port     int
		rate          int64
	}{{"blackhole", "node2", 9000, 1500, 0}, {"shaped", "node2", 9000, 9000, 100_000_000}, {"mixed", "node2", 1500, 9000, 0}} {
		l := up(t, c.builtin, "inspect-"+c.builtin)
		s, err := lab.Inspect(l.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range s.Nodes {
			if n.Name != c.node {
				continue
			}
			if got := n.Links[0]; got.MTU != c.mtu || got.PortMTU != c.port || got.RateBitsPerSec != c.rate {
				t.Errorf("%s %s: MTU %d port %d rate %d; want %d %d %d", c.builtin, c.node, got.MTU, got.PortMTU, got.RateBitsPerSec, c.mtu, c.port, c.rate)
			}
		}
		if s.State != lab.StateUp {
			t.Errorf("%s: state %s %q", c.builtin, s.State, s.Problems)
		}
	}
	rs, err := lab.Inspect(up(t, "routed", "inspect-routed").Name())
	if err != nil {
		t.Fatal(err)
	}
	if r := rs.Nodes[3].Routes; len(r) != 2 || r[0].To.String() != "198.18.10.0/24" || r[0].Via.String() != "198.18.20.254" || r[1].Via.String() != "fd00:20::fe" {
		t.Errorf("node3 routes %+v", r)
	}
}

// TestDefaultRoutes: "to: default" works for IPv4 and IPv6, and a link can
// carry several addresses of both versions.
func TestDefaultRoutes(t *testing.T) {
	l := upYAML(t, "defaults.yaml", `name: t3-defaults
switches: {a: {mtu: 9000}, b: {}}
nodes:
  h1:
    links: [{switch: a, addresses: [198.19.1.1/24, "fd00:1::1/64", 198.19.1.2/24]}]
    routes: [{to: default, via: 198.19.1.254}, {to: default, via: "fd00:1::fe"}]
  gw:
    forward: true
    links:
      - {switch: a, addresses: [198.19.1.254/24, "fd00:1::fe/64"]}
      - {switch: b, addresses: [198.19.2.254/24, "fd00:2::fe/64"]}
  h2:
    links: [{switch: b, addresses: [198.19.2.1/24, "fd00:2::1/64"]}]
    routes: [{to: default, via: 198.19.2.254}, {to: default, via: "fd00:2::fe"}]
`)
	h1, h2 := node(t, l, "h1"), node(t, l, "h2")
	for _, a := range h2.Addrs() {
		if err := reach(t, h1, h2, a.Addr()); err != nil {
			t.Error(err)
		}
	}
	for _, a := range h1.Addrs() {
		if err := reach(t, h2, h1, a.Addr()); err != nil {
			t.Error(err)
		}
	}
}

// TestGSOSegmentsChecked: UDP GSO packets (UDP_SEGMENT) from a 9000 node
// are checked segment by segment at a 1500 port, as a real switch checks
// each frame: 8000-byte segments never reach the 1500 node, 1000-byte
// segments do, in one send.
func TestGSOSegmentsChecked(t *testing.T) {
	l := upYAML(t, "gso.yaml", `name: t3-gso
switches: {ic: {mtu: 9000}}
nodes:
  big: {links: [{switch: ic, address: 198.18.30.1/24}]}
  small: {links: [{switch: ic, address: 198.18.30.2/24, mtu: 1500, port_mtu: 1500}]}
  peer: {links: [{switch: ic, address: 198.18.30.3/24}]}
`)
	big, small, peer := node(t, l, "big"), node(t, l, "small"), node(t, l, "peer")
	for _, c := range []struct {
		to      *lab.Node
		segment int
		arrive  bool
	}{{peer, 8000, true}, {small, 8000, false}, {small, 1000, true}} {
		dst := c.to.Addr("", 4)
		rfd, port := udpListen(t, c.to, dst)
		var sfd int
		err := big.Do(func() error {
			var err error
			if sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
				return err
			}
			if err := unix.SetsockoptInt(sfd, unix.IPPROTO_UDP, unix.UDP_SEGMENT, c.segment); err != nil {
				return err
			}
			return unix.Connect(sfd, sockaddr(dst, port))
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Write(sfd, make([]byte, 2*c.segment)); err != nil {
			t.Fatalf("GSO send of 2 x %d: %v", c.segment, err)
		}
		unix.Close(sfd)
		got := 0
		buf := make([]byte, 65536)
		// Arrivals are awaited as long as a loaded machine needs; a
		// drop can only be awaited for a while.
		deadline := time.Now().Add(map[bool]time.Duration{true: 30 * time.Second, false: 500 * time.Millisecond}[c.arrive])
		for time.Now().Before(deadline) && got < 2 {
			if n, _, err := unix.Recvfrom(rfd, buf, unix.MSG_DONTWAIT); err == nil && n == c.segment {
				got++
				continue
			}
			time.Sleep(5 * time.Millisecond)
		}
		if want := map[bool]int{true: 2, false: 0}[c.arrive]; got != want {
			t.Errorf("2 segments of %d bytes from big to %s: %d arrived, want %d", c.segment, c.to.Name(), got, want)
		}
	}
}

// upYAML brings up the topology in text (its name starts with t3) and
// removes it when the test ends.
func upYAML(t *testing.T, file, text string) *lab.Lab {
	t.Helper()
	top, err := lab.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(top.Name, prefix) {
		t.Fatalf("lab %s: test labs are named %s...", top.Name, prefix)
	}
	l, err := lab.Up(context.Background(), top)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Down(top.Name) })
	return l
}
