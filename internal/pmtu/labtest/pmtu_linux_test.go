//go:build linux

package labtest

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/pmtu"
)

// Healthy jumbo path: 9000 both ways, IPv4 and IPv6, exact to the byte.
func TestJumbo(t *testing.T) {
	l := up(t, "jumbo", "", "jumbo")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	tok := tokenFile(t, "token", token)
	agent(t, n2, "::", tok)
	for _, peer := range []string{"198.18.10.2", "fd00:10::2"} {
		out, _, code := run(t, n1, "pmtu", peer, "--token-file", tok, "--expect", "9000", "--json")
		r := decodePMTU(t, out)
		if code != 0 || r.Status != "ok" {
			t.Errorf("%s: exit %d status %s", peer, code, r.Status)
		}
		checkDirections(t, r, want{"ok", 9000, 0}, want{"ok", 9000, 0})
		for _, d := range r.Directions {
			if d.LocalMTU != 9000 || d.PeerMTU != 9000 || d.MeetsExpect == nil || !*d.MeetsExpect {
				t.Errorf("%s %s: %+v", peer, d.Direction, d)
			}
		}
		wantPayload := 8972
		if strings.Contains(peer, ":") {
			wantPayload = 8952
		}
		if r.Directions[0].PayloadPassed != wantPayload {
			t.Errorf("%s: payload %d, want %d", peer, r.Directions[0].PayloadPassed, wantPayload)
		}
	}
	// The human report says it the way the articles do.
	out, _, code := run(t, n1, "pmtu", "198.18.10.2", "--token-file", tok)
	if code != 0 || !strings.Contains(out, "8972 bytes of payload, 9000 on the wire, pass") {
		t.Errorf("human report (exit %d):\n%s", code, out)
	}
}

// A switch port left at 1500 between hosts at 9000: blackhole at exactly
// 1500, both ways, and --expect 9000 exits 2.
func TestBlackhole(t *testing.T) {
	l := up(t, "blackhole", "", "bh")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	tok := tokenFile(t, "token", token)
	agent(t, n2, "::", tok)
	for _, c := range []struct {
		peer string
		mtu  int
	}{{"198.18.10.2", 1500}, {"fd00:10::2", 1500}} {
		out, _, code := run(t, n1, "pmtu", c.peer, "--token-file", tok, "--expect", "9000", "--json")
		r := decodePMTU(t, out)
		if code != 2 || r.Status != "critical" {
			t.Errorf("%s: exit %d status %s, want 2 critical", c.peer, code, r.Status)
		}
		checkDirections(t, r, want{"blackhole", c.mtu, c.mtu + 1}, want{"blackhole", c.mtu, c.mtu + 1})
		for _, d := range r.Directions {
			t.Logf("%s %s: blackhole verdict in %s", c.peer, d.Direction, time.Duration(d.ElapsedNS))
		}
	}
	out, _, _ := run(t, n1, "pmtu", "198.18.10.2", "--token-file", tok, "--expect", "9000")
	for _, s := range []string{"1472 bytes of payload, 1500 on the wire, pass; 1473 do not", "blackhole", "BELOW --expect 9000", "without an ICMP error"} {
		if !strings.Contains(out, s) {
			t.Errorf("human report lacks %q:\n%s", s, out)
		}
	}
}

// A routed hop with MTU 1400: the router reports it (icmp, reporter = the
// router's address on our side); back from node3, whose own link is 1400,
// the limit is local.
func TestRouted(t *testing.T) {
	l := up(t, "routed", "", "rt")
	n1, n3 := node(t, l, "node1"), node(t, l, "node3")
	tok := tokenFile(t, "token", token)
	agent(t, n3, "::", tok)
	for _, c := range []struct{ peer, router string }{{"198.18.20.3", "198.18.10.254"}, {"fd00:20::3", "fd00:10::fe"}} {
		out, _, code := run(t, n1, "pmtu", c.peer, "--token-file", tok, "--json")
		r := decodePMTU(t, out)
		if code != 1 {
			t.Errorf("%s: exit %d without --expect, want 1 (a problem verdict is a warning, as in mesh)", c.peer, code)
		}
		checkDirections(t, r, want{"icmp", 1400, 1401}, want{"local-limit", 1400, 0})
		if d := r.Directions[0]; d.ICMPFrom != c.router || d.ICMPMTU != 1400 {
			t.Errorf("%s: icmp from %q mtu %d, want %s 1400", c.peer, d.ICMPFrom, d.ICMPMTU, c.router)
		}
	}
}

// node1 at 9000, node2 at 1500 on a 9000 switch: from node1 the frames
// above 1500 die at node2's interface (blackhole); from node2 its own
// interface is the limit (local-limit).
func TestMixed(t *testing.T) {
	l := up(t, "mixed", "", "mx")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	tok := tokenFile(t, "token", token)
	agent(t, n2, "::", tok)
	out, _, code := run(t, n1, "pmtu", "198.18.10.2", "--token-file", tok, "--expect", "9000", "--json")
	r := decodePMTU(t, out)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	checkDirections(t, r, want{"blackhole", 1500, 1501}, want{"local-limit", 1500, 0})
	if d := r.Directions[0]; d.PeerMTU != 1500 || d.LocalMTU != 9000 {
		t.Errorf("forward: local %d peer %d", d.LocalMTU, d.PeerMTU)
	}
}

// Without an agent: ICMP echo finds the same limits, forward only.
func TestICMP(t *testing.T) {
	l := up(t, "blackhole", "", "icmp")
	n1 := node(t, l, "node1")
	for _, c := range []struct {
		peer string
		w    want
		exit int
	}{
		{"198.18.10.2", want{"blackhole", 1500, 1501}, 2},
		{"fd00:10::2", want{"blackhole", 1500, 1501}, 2},
		{"198.18.10.3", want{"ok", 9000, 0}, 0},
		{"fd00:10::3", want{"ok", 9000, 0}, 0},
	} {
		out, _, code := run(t, n1, "pmtu", c.peer, "--icmp", "--expect", "9000", "--json")
		r := decodePMTU(t, out)
		if code != c.exit {
			t.Errorf("%s: exit %d, want %d", c.peer, code, c.exit)
		}
		checkDirections(t, r, c.w)
	}
	// Nobody at the address: unreachable, exit 3.
	out, _, code := run(t, n1, "pmtu", "198.18.10.99", "--icmp", "--json")
	r := decodePMTU(t, out)
	if code != 3 || len(r.Directions) != 1 || r.Directions[0].Verdict != "unreachable" {
		t.Errorf("no host: exit %d %+v", code, r.Directions)
	}
}

// Unprivileged ping sockets (where net.ipv4.ping_group_range allows, set
// here inside node1 only): ICMP errors from the router reach them through
// the error queue too.
func TestICMPPingSocket(t *testing.T) {
	l := up(t, "routed", "", "ping")
	n1 := node(t, l, "node1")
	err := n1.Do(func() error {
		// /proc/sys/net follows the calling thread's namespace: this
		// changes node1 only.
		if err := os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 0"), 0o644); err != nil {
			return err
		}
		for _, c := range []struct{ dst, router string }{{"198.18.20.3", "198.18.10.254"}, {"fd00:20::3", "fd00:10::fe"}} {
			p, err := pmtu.NewICMPProber(netip.Addr{}, netip.MustParseAddr(c.dst))
			if err != nil {
				return err
			}
			r, err := pmtu.Run(context.Background(), p, pmtu.Options{})
			unpriv := p.Unprivileged()
			p.Close()
			if err != nil {
				return err
			}
			if !unpriv {
				t.Errorf("%s: raw socket used although ping sockets are allowed", c.dst)
			}
			if r.Verdict != pmtu.ICMP || r.PathMTU != 1400 || r.ICMPFrom != c.router || r.ICMPMTU != 1400 {
				t.Errorf("%s over a ping socket: %s %d from %s (%d), want icmp 1400 from %s", c.dst, r.Verdict, r.PathMTU, r.ICMPFrom, r.ICMPMTU, c.router)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
