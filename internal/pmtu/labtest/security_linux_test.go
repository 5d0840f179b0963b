//go:build linux

package labtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	agentpkg "github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/wire"
)

// udpIn counts every UDP datagram that reached node n's stack (delivered,
// to a closed port, or in error).
func udpIn(t *testing.T, n *lab.Node) int64 {
	t.Helper()
	var total int64
	err := n.Do(func() error {
		s, err := counters.Take()
		if err != nil {
			return err
		}
		for _, f := range []string{"InDatagrams", "NoPorts", "InErrors"} {
			v, _ := s.SNMP.Get("Udp", f)
			total += v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// A client with the wrong token is refused before any probe: exit 3, one
// clear line, and not one UDP datagram reaches the agent's node.
func TestWrongToken(t *testing.T) {
	l := up(t, "jumbo", "", "tok")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	log := agent(t, n2, "198.18.10.2", tokenFile(t, "token", token))
	before := udpIn(t, n2)
	out, errOut, code := run(t, n1, "pmtu", "198.18.10.2", "--token-file", tokenFile(t, "wrong", "t4-another-token-0123456789"))
	if code != 3 || out != "" {
		t.Errorf("wrong token: exit %d, stdout %q", code, out)
	}
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "refused the session: authentication failed") {
		t.Errorf("wrong token: stderr %q, want one line saying authentication failed", errOut)
	}
	if after := udpIn(t, n2); after != before {
		t.Errorf("%d UDP datagrams reached the agent's node after a refused handshake", after-before)
	}
	if !waitLog(log, "refused by 198.18.10.1") {
		t.Errorf("agent log has no refusal:\n%s", log)
	}
	// Token files that must be refused before anything is sent.
	for _, c := range []struct{ content, want string }{{"", "empty"}, {"short", "at least 16"}} {
		_, errOut, code := run(t, n1, "pmtu", "198.18.10.2", "--token-file", tokenFile(t, "bad", c.content))
		if code != 3 || !strings.Contains(errOut, c.want) {
			t.Errorf("token %q: exit %d, %q", c.content, code, errOut)
		}
	}
}

// The probe endpoint answers nothing that is not tagged for the live
// session, no replay, and never more bytes than it received; garbage does
// not disturb the session.
func TestEndpointSecurity(t *testing.T) {
	l := up(t, "jumbo", "", "sec")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	tok := tokenFile(t, "token", token)
	log := agent(t, n2, "198.18.10.2", tok)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		c  *agentpkg.Client
		ep netip.AddrPort
		u  *net.UDPConn
	)
	err := n1.Do(func() error {
		var err error
		if c, err = agentpkg.Dial(ctx, "198.18.10.2", []byte(token), agentpkg.DialOptions{Software: "t4 security test"}); err != nil {
			return err
		}
		var opened agentpkg.PMTUOpened
		if err := c.Call(ctx, agentpkg.KindPMTUOpen, agentpkg.PMTUOpen{Local: "198.18.10.2"}, &opened); err != nil {
			return err
		}
		ep = netip.MustParseAddrPort(opened.Addr)
		u, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("198.18.10.1:0")))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer u.Close()
	send := func(b []byte) {
		if _, err := u.WriteToUDPAddrPort(b, ep); err != nil {
			t.Fatalf("send %d bytes: %v", len(b), err)
		}
	}
	// reply returns the size of the next datagram within d, or -1.
	buf := make([]byte, 65536)
	reply := func(d time.Duration) int {
		u.SetReadDeadline(time.Now().Add(d))
		n, _, err := u.ReadFromUDPAddrPort(buf)
		if err != nil {
			return -1
		}
		return n
	}
	// Unauthenticated: random bytes of several sizes, a well-formed header
	// sealed with the wrong key, and a header for another session.
	bad := 0
	for _, size := range []int{1, 47, 48, 100, 1400, 8000} {
		b := make([]byte, size)
		rand.Read(b)
		send(b)
		bad++
	}
	wrongKeys := wire.SessionKeys([]byte("t4-another-token-0123456789"), make([]byte, 32), make([]byte, 32))
	forged := make([]byte, 1000)
	wire.NewSealer(wrongKeys.ClientToAgent, c.Session).SealPacket(forged, wire.KindProbe, 0)
	send(forged)
	other := make([]byte, 1000)
	wire.NewSealer(c.Keys.ClientToAgent, c.Session+1).SealPacket(other, wire.KindProbe, 0)
	send(other)
	// The agent's own direction key must not verify either (reflection).
	reflected := make([]byte, 1000)
	wire.NewSealer(c.Keys.AgentToClient, c.Session).SealPacket(reflected, wire.KindProbe, 0)
	send(reflected)
	bad += 3
	if n := reply(500 * time.Millisecond); n >= 0 {
		t.Fatalf("unauthenticated datagrams got a %d-byte reply", n)
	}
	// Authenticated probes of every size get a reply no larger than the
	// probe; a replay gets nothing.
	var last []byte
	for _, size := range []int{wire.HeaderLen, 49, 100, 1472, 8972} {
		p := make([]byte, size)
		if _, err := c.Sealer().SealPacket(p, wire.KindProbe, 0); err != nil {
			t.Fatal(err)
		}
		send(p)
		n := reply(2 * time.Second)
		if n < 0 {
			t.Fatalf("authenticated %d-byte probe: no reply", size)
		}
		if n > size {
			t.Fatalf("reply of %d bytes to a %d-byte probe: amplification", n, size)
		}
		if h, err := c.Opener().Open(buf[:n]); err != nil || h.Kind != wire.KindAck {
			t.Fatalf("reply to %d-byte probe: %+v %v", size, h, err)
		}
		last = p
	}
	send(last)
	bad++
	if n := reply(500 * time.Millisecond); n >= 0 {
		t.Fatalf("replayed probe got a %d-byte reply", n)
	}
	// The session still works after the garbage.
	var rs []struct {
		Verdict string `json:"verdict"`
		PathMTU int    `json:"path_mtu"`
	}
	err = n1.Do(func() error {
		r, err := c.PMTU(ctx, agentpkg.PMTUOptions{Target: netip.MustParseAddr("198.18.10.2")})
		for _, x := range r {
			rs = append(rs, struct {
				Verdict string `json:"verdict"`
				PathMTU int    `json:"path_mtu"`
			}{string(x.Verdict), x.PathMTU})
		}
		return err
	})
	if err != nil || len(rs) != 2 || rs[0].PathMTU != 9000 || rs[1].PathMTU != 9000 {
		t.Fatalf("session after garbage: %+v %v", rs, err)
	}
	c.Close()
	if !waitLog(log, fmt.Sprintf("dropped %d;", bad)) {
		t.Errorf("agent log does not count the %d dropped datagrams:\n%s", bad, log)
	}
}
