//go:build linux

package pmtu

import (
	"context"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/wire"
)

func pair(t *testing.T, addr string) (client, agent *Conn) {
	t.Helper()
	keys := wire.SessionKeys([]byte("loopback token 0123456789"), make([]byte, 32), make([]byte, 32))
	a := netip.MustParseAddr(addr)
	au, err := ListenUDP(netip.AddrPortFrom(a, 0))
	if err != nil {
		t.Fatal(err)
	}
	agent, err = NewConn(au, wire.NewSealer(keys.AgentToClient, 1), wire.NewOpener(keys.ClientToAgent, 1), netip.AddrPort{}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	cu, err := ListenUDP(netip.AddrPortFrom(a, 0))
	if err != nil {
		t.Fatal(err)
	}
	client, err = NewConn(cu, wire.NewSealer(keys.ClientToAgent, 1), wire.NewOpener(keys.AgentToClient, 1), agent.LocalAddr(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client, agent
}

// On loopback (MTU 65536) the largest IP packet, 65535 bytes, passes both
// ways; the agent side learns its peer from the client's first probe.
func TestLoopbackUDP(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "::1"} {
		client, agent := pair(t, addr)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		fwd, err := Run(ctx, client, Options{})
		if err != nil || fwd.Verdict != OK || fwd.PathMTU != 65535 || fwd.LocalIface != "lo" {
			t.Fatalf("%s forward: %+v %v", addr, fwd, err)
		}
		if agent.Peer() != client.LocalAddr() {
			t.Fatalf("agent learned peer %s, client is %s", agent.Peer(), client.LocalAddr())
		}
		rev, err := Run(ctx, agent, Options{Max: 9000})
		if err != nil || rev.Verdict != OK || rev.PathMTU != 9000 {
			t.Fatalf("%s reverse: %+v %v", addr, rev, err)
		}
		t.Logf("%s: forward %s in %s (%d probes); reverse %s", addr, fwd.Line(), fwd.Elapsed, fwd.Probes, rev.Line())
	}
}

// A Conn never answers with more than it got, and ignores what is not
// tagged for its session.
func TestConnAnswersOnlyTaggedProbes(t *testing.T) {
	client, agent := pair(t, "127.0.0.1")
	// A stranger with the wrong key: no learned peer, no ack.
	keys := wire.SessionKeys([]byte("another token 0123456789"), make([]byte, 32), make([]byte, 32))
	su, _ := ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"))
	stranger, err := NewConn(su, wire.NewSealer(keys.ClientToAgent, 1), wire.NewOpener(keys.AgentToClient, 1), agent.LocalAddr(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	// MaxTimeout bounds the patient round that follows an unanswered
	// first one (1 s by default).
	r, _ := Run(context.Background(), stranger, Options{Tries: 1, MinTimeout: 50 * time.Millisecond, MaxTimeout: 100 * time.Millisecond})
	if r.Verdict != Unreachable || agent.Peer().IsValid() {
		t.Fatalf("stranger: %s, agent peer %s", r.Verdict, agent.Peer())
	}
	if _, err := client.Send(context.Background(), client.MinSize()-1); err == nil {
		t.Fatal("probe below the header size sent")
	}
}

func TestLoopbackICMP(t *testing.T) {
	p, err := NewICMPProber(netip.Addr{}, netip.MustParseAddr("127.0.0.1"))
	if err != nil && os.Geteuid() != 0 {
		roottest.Require(t, "ICMP echo: a raw socket, or a ping socket that net.ipv4.ping_group_range allows")
	}
	if err != nil {
		t.Fatalf("icmp prober (needs root or ping_group_range): %v", err)
	}
	defer p.Close()
	r, err := Run(context.Background(), p, Options{Max: 9000})
	if err != nil || r.Verdict != OK || r.PathMTU != 9000 || r.Method != "icmp" {
		t.Fatalf("icmp: %+v %v", r, err)
	}
	t.Logf("icmp: %s (%d probes, %s)", r.Line(), r.Probes, r.Elapsed)
}
