//go:build linux

// Package labtest holds the tests of internal/lab that build network
// namespaces, and so need root (CAP_NET_ADMIN and CAP_SYS_ADMIN): labs with
// real traffic, `interlink lab` run as a user would, killed at known points
// and cleaned up. Without root they fail with one clear message. The pure
// tests (topology parsing, lock bookkeeping) stay in internal/lab and run as
// any user.
package labtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

// Every lab these tests create is named t3-...; labs of other users of this
// machine are never touched.
const prefix = "t3"

func TestMain(m *testing.M) {
	if helperUp() {
		return // not reached: the helper is killed or exits
	}
	labuptest.ShortMain("lab tests")
	if err := lab.CheckPrivilege(); err != nil {
		fmt.Fprintf(os.Stderr, "lab tests build network namespaces and need root: %v\n", err)
		os.Exit(1)
	}
	os.Exit(runMain(m))
}

// up brings up a built-in under the name t3-<suffix> and removes it when the
// test ends, pass or fail.
func up(t testing.TB, builtin, suffix string) *lab.Lab {
	t.Helper()
	topo, err := lab.Load(builtin)
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = prefix + "-" + suffix
	return labuptest.Up(t, topo)
}

func node(t testing.TB, l *lab.Lab, name string) *lab.Node { return labuptest.Node(t, l, name) }

// ipOverhead is the IP plus UDP header size: payload = MTU - overhead.
func ipOverhead(is4 bool) int {
	if is4 {
		return 28
	}
	return 48
}

func TestJumbo(t *testing.T) {
	l := up(t, "jumbo", "jumbo")
	n1, n3 := node(t, l, "node1"), node(t, l, "node3")
	for _, v := range []int{4, 6} {
		dst := n3.Addr("ic", v)
		rfd, port := udpListen(t, n3, dst)
		full := 9000 - ipOverhead(v == 4)
		p := sendDF(t, n1, dst, port, rfd, full, time.Second)
		if p.sendErr != nil || !p.arrived || len(p.icmp) != 0 {
			t.Errorf("IPv%d: DF payload %d (packet 9000) to %s: send %v, arrived %v, icmp %v; want it to arrive", v, full, dst, p.sendErr, p.arrived, p.icmp)
		}
		// One byte over the node's own MTU is refused locally.
		p = sendDF(t, n1, dst, port, rfd, full+1, 200*time.Millisecond)
		if !errors.Is(p.sendErr, unix.EMSGSIZE) || p.arrived {
			t.Errorf("IPv%d: DF payload %d: send %v, arrived %v; want EMSGSIZE from the 9000 interface", v, full+1, p.sendErr, p.arrived)
		}
	}
}

func TestBlackhole(t *testing.T) {
	l := up(t, "blackhole", "bh")
	// IPv4 and IPv6 at once: the losses this proves are waits (up to 3 s
	// per family), and the two families share nothing but the links.
	for _, v := range []int{4, 6} {
		t.Run(fmt.Sprintf("IPv%d", v), func(t *testing.T) {
			t.Parallel()
			blackholeFamily(t, l, v)
		})
	}
}

// blackholeFamily is TestBlackhole in IP version v.
func blackholeFamily(t *testing.T, l *lab.Lab, v int) {
	n1, n2, n3 := node(t, l, "node1"), node(t, l, "node2"), node(t, l, "node3")
	dst := n2.Addr("ic", v)
	rfd, port := udpListen(t, n2, dst)
	atPort := 1500 - ipOverhead(v == 4)
	p := sendDF(t, n1, dst, port, rfd, atPort, time.Second)
	if p.sendErr != nil || !p.arrived {
		t.Fatalf("IPv%d: DF payload %d (packet = port MTU 1500) to node2: send %v, arrived %v; want it to arrive", v, atPort, p.sendErr, p.arrived)
	}
	p = sendDF(t, n1, dst, port, rfd, atPort+1, 500*time.Millisecond)
	if p.sendErr != nil {
		t.Errorf("IPv%d: send one byte over the port MTU: %v; node1's own MTU is 9000, want the send to succeed", v, p.sendErr)
	}
	if p.arrived {
		t.Errorf("IPv%d: DF packet of 1501 bytes arrived at node2 through a 1500 switch port", v)
	}
	if len(p.icmp) != 0 {
		t.Errorf("IPv%d: a blackhole sends no ICMP, got %+v on the error queue", v, p.icmp)
	}
	// The healthy part of the switch still carries jumbo frames.
	dst3 := n3.Addr("ic", v)
	rfd3, port3 := udpListen(t, n3, dst3)
	full := 9000 - ipOverhead(v == 4)
	if p := sendDF(t, n1, dst3, port3, rfd3, full, time.Second); !p.arrived {
		t.Errorf("IPv%d: node1 -> node3 jumbo DF datagram lost (send %v)", v, p.sendErr)
	}
	// The other direction is a blackhole too: node2's frames above 1500
	// die at its own switch port, and node2 sees no error either.
	dst1 := n1.Addr("ic", v)
	rfd1, port1 := udpListen(t, n1, dst1)
	if p := sendDF(t, n2, dst1, port1, rfd1, atPort, time.Second); !p.arrived || p.sendErr != nil {
		t.Errorf("IPv%d: node2 -> node1 at the port MTU: send %v, arrived %v; want it to arrive", v, p.sendErr, p.arrived)
	}
	for _, over := range []int{1, 4, 5, 100, 9000 - ipOverhead(v == 4) - atPort} {
		if p := sendDF(t, n2, dst1, port1, rfd1, atPort+over, 300*time.Millisecond); p.arrived || p.sendErr != nil || len(p.icmp) != 0 {
			t.Errorf("IPv%d: node2 -> node1 %d bytes over the port MTU: send %v, arrived %v, icmp %v; want silent loss", v, over, p.sendErr, p.arrived, p.icmp)
		}
	}
	// TCP: jumbo segments (GSO packets included) vanish; segments
	// that fit the port pass even when GSO bundles them.
	const size = 1 << 20
	if got := tcpSend(t, n1, n2, dst, 0, size, time.Second); got >= size {
		t.Errorf("IPv%d: TCP node1 -> node2 with jumbo MSS delivered %d bytes through a 1500 port", v, got)
	}
	mss := 1500 - ipOverhead(v == 4) + 8 - 20 - 12 // IP + TCP + timestamps
	for _, pair := range [][2]*lab.Node{{n1, n2}, {n2, n1}} {
		d := pair[1].Addr("ic", v)
		if got := tcpSend(t, pair[0], pair[1], d, mss, size, 3*time.Second); got != size {
			t.Errorf("IPv%d: TCP %s -> %s with MSS %d delivered %d of %d bytes", v, pair[0].Name(), pair[1].Name(), mss, got, size)
		}
	}
}

// TestStart: a process started in a node sees the node's interfaces in
// /sys/class/net and /proc/net, as with ip netns exec, and the host is
// unchanged afterwards.
func TestStart(t *testing.T) {
	l := up(t, "jumbo", "start")
	n1 := node(t, l, "node1")
	hostSys, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := exec.Command("/bin/sh", "-c", "ls /sys/class/net; cat /sys/class/net/eth1/mtu; grep -c eth1: /proc/net/dev")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := n1.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sh in node1: %v: %s", err, out.String())
	}
	if got, want := strings.Fields(out.String()), []string{"eth1", "lo", "9000", "1"}; !slices.Equal(got, want) {
		t.Errorf("node1 sees %q, want %q", got, want)
	}
	after, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(hostSys) {
		t.Errorf("host /sys/class/net changed: %d entries before, %d after", len(hostSys), len(after))
	}
	// Exit codes come through.
	cmd = exec.Command("/bin/sh", "-c", "exit 7")
	if err := n1.Start(cmd); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit 7 in node1: got %v", err)
	}
}

func TestRouted(t *testing.T) {
	l := up(t, "routed", "routed")
	n1, n3 := node(t, l, "node1"), node(t, l, "node3")
	for _, v := range []int{4, 6} {
		dst := n3.Addr("wan", v)
		rfd, port := udpListen(t, n3, dst)
		// Fits the 1400 hop: arrives.
		fit := 1400 - ipOverhead(v == 4)
		if p := sendDF(t, n1, dst, port, rfd, fit, time.Second); !p.arrived || p.sendErr != nil || len(p.icmp) != 0 {
			t.Fatalf("IPv%d: DF payload %d (packet 1400) node1 -> node3: send %v, arrived %v, icmp %+v", v, fit, p.sendErr, p.arrived, p.icmp)
		}
		// A jumbo packet: r1 answers with the next-hop MTU.
		p := sendDF(t, n1, dst, port, rfd, 9000-ipOverhead(v == 4), time.Second)
		if p.arrived {
			t.Errorf("IPv%d: a 9000-byte DF packet crossed the 1400 hop", v)
		}
		if len(p.icmp) != 1 {
			t.Fatalf("IPv%d: want one ICMP error from r1, got %+v (send %v)", v, p.icmp, p.sendErr)
		}
		ee := p.icmp[0]
		wantOrigin, wantType, wantCode := uint8(unix.SO_EE_ORIGIN_ICMP), uint8(3), uint8(4) // dest unreachable, frag needed
		if v == 6 {
			wantOrigin, wantType, wantCode = unix.SO_EE_ORIGIN_ICMP6, 2, 0 // packet too big
		}
		if ee.Errno != uint32(unix.EMSGSIZE) || ee.Origin != wantOrigin || ee.Type != wantType || ee.Code != wantCode || ee.Info != 1400 {
			t.Errorf("IPv%d: ICMP error %+v; want EMSGSIZE origin %d type %d code %d with next-hop MTU 1400", v, ee, wantOrigin, wantType, wantCode)
		}
	}
}

// TestReach: every node reaches every address of every other node, IPv4 and
// IPv6, across switches and the router.
func TestReach(t *testing.T) {
	for _, b := range []string{"routed", "rac"} {
		t.Run(b, func(t *testing.T) {
			l := up(t, b, "reach-"+b)
			for _, from := range l.Nodes() {
				for _, to := range l.Nodes() {
					if from == to {
						continue
					}
					for _, a := range to.Addrs() {
						if err := reach(t, from, to, a.Addr()); err != nil {
							t.Error(err)
						}
					}
				}
			}
		})
	}
}

func TestMixed(t *testing.T) {
	l := up(t, "mixed", "mixed")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	for _, v := range []int{4, 6} {
		d2, d1 := n2.Addr("ic", v), n1.Addr("ic", v)
		r2, p2 := udpListen(t, n2, d2)
		r1, p1 := udpListen(t, n1, d1)
		at := 1500 - ipOverhead(v == 4)
		if p := sendDF(t, n1, d2, p2, r2, at, time.Second); !p.arrived {
			t.Errorf("IPv%d: node1 -> node2 at 1500: lost (send %v)", v, p.sendErr)
		}
		// node2's NIC drops what its MTU cannot take: silent for node1.
		if p := sendDF(t, n1, d2, p2, r2, at+1, 300*time.Millisecond); p.arrived || p.sendErr != nil || len(p.icmp) != 0 {
			t.Errorf("IPv%d: node1 -> node2 at 1501: send %v, arrived %v, icmp %v; want silent loss", v, p.sendErr, p.arrived, p.icmp)
		}
		// node2 itself cannot send more than its MTU.
		if p := sendDF(t, n2, d1, p1, r1, at+1, 300*time.Millisecond); !errors.Is(p.sendErr, unix.EMSGSIZE) {
			t.Errorf("IPv%d: node2 -> node1 at 1501: send %v; want EMSGSIZE", v, p.sendErr)
		}
		if p := sendDF(t, n1, d1, p1, r1, 0, 0); p.sendErr != nil {
			t.Errorf("IPv%d: loopback in node1: %v", v, p.sendErr)
		}
	}
}

// TestShaped: a shaped link delivers close to its rate, and the unshaped
// direction is much faster.
func TestShaped(t *testing.T) {
	l := up(t, "shaped", "shaped")
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	rate := n2.Spec().Links[0].RateBitsPerSec
	got := linkRate(t, n2, n1, n1.Addr("ic", 4), "eth1", 300*time.Millisecond, time.Second)
	if ratio := got / float64(rate); ratio < 0.9 || ratio > 1.05 {
		t.Errorf("node2 (shaped to %d bit/s) delivered %.0f bit/s: %.2f of its rate, want 0.90..1.05", rate, got, ratio)
	}
	// Unshaped, a veth moves Gbit/s when the machine is idle; with the whole
	// test suite beside it on two cores it has delivered 231 Mbit/s. 1.5x the
	// shaped rate still tells "not shaped" from "shaped".
	back := linkRate(t, n1, n2, n2.Addr("ic", 4), "eth1", 100*time.Millisecond, time.Second)
	if back < 1.5*float64(rate) {
		t.Errorf("unshaped node1 -> node2 only %.0f bit/s, want well above %d", back, rate)
	}
	t.Logf("shaped %d bit/s: delivered %.1f Mbit/s; unshaped direction %.1f Mbit/s", rate, got/1e6, back/1e6)
}

// TestDownKillsProcesses: Down ends the processes running in the lab's
// nodes, so nothing keeps a namespace alive.
func TestDownKillsProcesses(t *testing.T) {
	l := up(t, "jumbo", "procs")
	cmd := exec.Command("sleep", "60")
	if err := node(t, l, "node2").Start(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := lab.Down(l.Name()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("sleep in node2 ended cleanly; want it killed by Down")
		}
	case <-time.After(60 * time.Second): // only against a hang
		cmd.Process.Kill()
		t.Fatal("sleep in node2 still runs after Down")
	}
	if _, err := lab.Open(l.Name()); !errors.Is(err, lab.ErrNotFound) {
		t.Errorf("Open after Down: %v; want ErrNotFound", err)
	}
}

// TestUpFailureCleansUp: an Up that fails after it created its first
// namespace (its context is cancelled) removes what it made.
func TestUpFailureCleansUp(t *testing.T) {
	dir := privateDir(t)
	topo, err := lab.Load("routed")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = prefix + "-cancel"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lab.Up(ctx, topo); !errors.Is(err, context.Canceled) {
		t.Fatalf("Up with a cancelled context: %v", err)
	}
	nothingLeft(t, topo.Name, dir)
}

// BenchmarkUpDown brings a four-node lab (routed: four nodes, a router
// among them, two switches, six links) up and down.
func BenchmarkUpDown(b *testing.B) {
	topo, err := lab.Load("routed")
	if err != nil {
		b.Fatal(err)
	}
	topo.Name = prefix + "-bench"
	var upTime, downTime time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := lab.Up(context.Background(), topo); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := lab.Down(topo.Name); err != nil {
			b.Fatal(err)
		}
		upTime += mid.Sub(start)
		downTime += time.Since(mid)
	}
	b.ReportMetric(upTime.Seconds()*1000/float64(b.N), "up-ms/op")
	b.ReportMetric(downTime.Seconds()*1000/float64(b.N), "down-ms/op")
}

// BenchmarkUpBuiltin runs `lab up pg` and `lab up galera` as a user would
// and times them (their tests used to hold them to 30 s and 60 s, which a
// loaded machine missed; here it was about 2 s and 8 s).
func BenchmarkUpBuiltin(b *testing.B) {
	for _, c := range []struct {
		builtin string
		dir     func(testing.TB) string
	}{{"pg", pgDir}, {"galera", galeraDir}} {
		b.Run(c.builtin, func(b *testing.B) {
			c.dir(b)
			name := prefix + "-bup" + c.builtin
			b.Cleanup(func() { run(b, "lab", "down", name) })
			var up time.Duration
			for b.Loop() {
				start := time.Now()
				if r := run(b, "lab", "up", c.builtin, "--name", name); r.code != 0 {
					b.Fatalf("lab up %s: exit %d: %s%s", c.builtin, r.code, r.stdout, r.stderr)
				}
				up += time.Since(start)
				if r := run(b, "lab", "down", name); r.code != 0 {
					b.Fatalf("lab down %s: exit %d: %s", name, r.code, r.stderr)
				}
			}
			b.ReportMetric(up.Seconds()/float64(b.N), "up-s/op")
		})
	}
}
