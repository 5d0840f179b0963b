//go:build linux

package labtest

import (
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/ebpf"
	"github.com/interlink/interlink/internal/lab"
)

// lossyYAML: node1's link loses 10% of its frames each way; node2's port
// is narrower than node2 (a size filter without loss); node3 is plain.
const lossyYAML = `name: t3-loss
switches:
  ic: {mtu: 9000}
nodes:
  node1: {links: [{switch: ic, address: 198.18.10.1/24, loss: 10%}]}
  node2: {links: [{switch: ic, address: 198.18.10.2/24, port_mtu: 1500}]}
  node3: {links: [{switch: ic, address: 198.18.10.3/24}]}
`

// udpBurst sends n datagrams of 64 bytes from node `from` to dst:port,
// paced so that no queue on the way overflows, and returns how many the
// listener rfd got (it stops reading 300 ms after the last one came, or
// after 300 ms when none came).
func udpBurst(t *testing.T, from *lab.Node, dst netip.Addr, port, rfd, n int) int {
	t.Helper()
	var sfd int
	err := from.Do(func() error {
		var err error
		if sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		return unix.Connect(sfd, sockaddr(dst, port))
	})
	if err != nil {
		t.Fatalf("udp socket in %s: %v", from.Name(), err)
	}
	defer unix.Close(sfd)
	if err := unix.SetsockoptInt(rfd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20); err != nil {
		t.Fatal(err)
	}
	got := 0
	buf := make([]byte, 2048)
	drain := func() {
		for {
			if _, _, err := unix.Recvfrom(rfd, buf, unix.MSG_DONTWAIT); err != nil {
				return
			}
			got++
		}
	}
	msg := make([]byte, 64)
	for i := range n {
		if _, err := unix.Write(sfd, msg); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if i%50 == 49 {
			time.Sleep(time.Millisecond)
			drain()
		}
	}
	last := time.Now()
	for time.Since(last) < 300*time.Millisecond {
		before := got
		drain()
		if got > before {
			last = time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

// linkStatus inspects the lab and returns node's first link.
func linkStatus(t *testing.T, name, node string) lab.LinkStatus {
	t.Helper()
	s, err := lab.Inspect(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Problems) > 0 {
		t.Errorf("lab %s: problems %v", name, s.Problems)
	}
	for _, n := range s.Nodes {
		if n.Name == node {
			return n.Links[0]
		}
	}
	t.Fatalf("lab %s has no node %s", name, node)
	return lab.LinkStatus{}
}

// portCounters returns a port filter's counters in one direction (zero when
// the port has none there).
func portCounters(pf *lab.PortFilter, fromNode bool) ebpf.Counters {
	switch {
	case pf == nil:
	case fromNode && pf.FromNode != nil:
		return *pf.FromNode
	case !fromNode && pf.ToNode != nil:
		return *pf.ToNode
	}
	return ebpf.Counters{}
}

// TestLossyLink: a link with loss: 10% loses about 10% of the datagrams
// that cross it (between bounds of 7 standard deviations, which a correct
// filter misses about once in 10^12 runs), every one of them counted by
// its port's filter and shown by lab status; a port with a size filter and
// no loss loses none. lab set with a bad loss exits 3 in one line naming
// it and changes nothing; lab set loss=0 removes the loss, and then every
// datagram arrives. A lossy port without its classifier is a problem.
func TestLossyLink(t *testing.T) {
	privateDir(t)
	l := upYAML(t, "lossy.yaml", lossyYAML)
	const name = "t3-loss"
	n1, n2 := node(t, l, "node1"), node(t, l, "node2")
	dst := n2.Addr("ic", 4)
	rfd, port := udpListen(t, n2, dst)
	// ARP first, by datagrams until one arrives (a lost request or reply
	// costs a retry): then the burst is what crosses node1's port.
	deadline := time.Now().Add(20 * time.Second)
	for udpBurst(t, n1, dst, port, rfd, 1) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no datagram from node1 reached node2 in 20 s")
		}
	}
	before1, before2 := linkStatus(t, name, "node1"), linkStatus(t, name, "node2")
	if before1.LossPercent != 10 || before2.LossPercent != 0 || before1.PortFilter == nil || before2.PortFilter == nil {
		t.Fatalf("status before: node1 %+v, node2 %+v", before1, before2)
	}
	const n = 4000
	got := udpBurst(t, n1, dst, port, rfd, n)
	after1, after2 := linkStatus(t, name, "node1"), linkStatus(t, name, "node2")
	lost := uint64(n - got)
	dropped := portCounters(after1.PortFilter, true).DroppedLoss - portCounters(before1.PortFilter, true).DroppedLoss
	mean, sd := n*0.1, math.Sqrt(n*0.1*0.9)
	lo, hi := uint64(mean-7*sd), uint64(mean+7*sd)
	t.Logf("loss 10%%: %d of %d datagrams lost (%.2f%%), node1's port dropped %d at random; bounds %d..%d", lost, n, 100*float64(lost)/n, dropped, lo, hi)
	if lost < lo || lost > hi {
		t.Errorf("%d of %d datagrams lost across a 10%% link, want %d to %d", lost, n, lo, hi)
	}
	// Nothing else on node1's port while the burst ran but the datagrams
	// (and perhaps an ARP probe or an IPv6 router solicitation), so the
	// port's count is the loss.
	if dropped < lost || dropped > lost+5 {
		t.Errorf("node1's port counted %d dropped at random, %d datagrams were lost", dropped, lost)
	}
	if c := portCounters(after2.PortFilter, false); c.DroppedLoss != 0 || c.DroppedMTU != 0 || c.Frames < uint64(got) {
		t.Errorf("node2's port (size filter, no loss) to node2: %+v after %d datagrams arrived; want them all counted, none dropped", c, got)
	}

	// A bad loss in lab set: exit 3, one line naming it, the lab as it was.
	for _, kv := range []string{"loss=150%", "loss=-1%", "loss=abc"} {
		r := run(t, "lab", "set", name, "node1:eth0", kv)
		if r.code != 3 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, kv) {
			t.Errorf("lab set %s: exit %d, stdout %q, stderr %q; want exit 3 and one line naming %s", kv, r.code, r.stdout, r.stderr, kv)
		}
	}
	if st := linkStatus(t, name, "node1"); st.LossPercent != 10 || portCounters(st.PortFilter, true).Frames < portCounters(after1.PortFilter, true).Frames {
		t.Errorf("after refused lab sets, node1's link: %+v (the filter was replaced, or its loss changed)", st)
	}

	// loss=0: the filter goes (node1's port has no size limit), and every
	// datagram arrives.
	r := run(t, "lab", "set", name, "node1:eth0", "loss=0")
	if r.code != 0 || strings.Contains(r.stdout, "LOSS") {
		t.Fatalf("lab set loss=0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st := linkStatus(t, name, "node1"); st.LossPercent != 0 || st.PortFilter != nil {
		t.Errorf("after loss=0, node1's link: %+v; want no loss and no filter", st)
	}
	if got := udpBurst(t, n1, dst, port, rfd, n); got != n {
		t.Errorf("loss=0: %d of %d datagrams arrived", got, n)
	}
	if c := portCounters(linkStatus(t, name, "node2").PortFilter, false); c.DroppedLoss != 0 {
		t.Errorf("node2's port (no loss) dropped %d at random", c.DroppedLoss)
	}

	// A lossy port whose classifier is gone is a problem lab status names.
	if r := run(t, "lab", "set", name, "node1:eth0", "loss=5%"); r.code != 0 {
		t.Fatalf("lab set loss=5%%: exit %d %s", r.code, r.stderr)
	}
	removeClassifier(t, "il-"+name, "node1-eth0")
	s, err := lab.Inspect(name)
	if err != nil {
		t.Fatal(err)
	}
	want := "switch port node1-eth0 drops 0 of the frames from the node at random, topology says 5%"
	if s.State != lab.StateDamaged || !slices.Contains(s.Problems, want) {
		t.Errorf("lab %s without node1's classifier: %s, problems %q; want damaged and %q", name, s.State, s.Problems, want)
	}
}

// removeClassifier deletes the clsact qdisc (and with it the classifier)
// of switch port in the lab's switch namespace ns.
func removeClassifier(t *testing.T, ns, port string) {
	t.Helper()
	nh, err := netns.GetFromPath(filepath.Join(lab.NetnsDir, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	h, err := netlink.NewHandleAt(nh)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(port)
	if err != nil {
		t.Fatal(err)
	}
	err = h.QdiscDel(&netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"})
	if err != nil {
		t.Fatal(err)
	}
}
