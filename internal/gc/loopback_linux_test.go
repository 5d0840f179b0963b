package gc

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

func noWait(context.Context, int) error { return nil }

// cluster builds n nodes on loopback, each pair with keys of its own as
// the agents' pair sessions would have (and keys of their own for the
// pings, on sockets of their own), without agents.
type cluster struct {
	socks, pingSocks []*sock
	addrs, pingAddrs []netip.AddrPort
	peers, pingPeers [][]Peer
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{}
	build := func() ([]*sock, []netip.AddrPort, [][]Peer) {
		socks, addrs, peers := make([]*sock, n), make([]netip.AddrPort, n), make([][]Peer, n)
		for i := range socks {
			s, a, err := openSock(netip.MustParseAddr("127.0.0.1"))
			if err != nil {
				t.Fatal(err)
			}
			socks[i], addrs[i] = s, a
			peers[i] = make([]Peer, n)
		}
		for i := 0; i < n; i++ {
			peers[i][i] = SelfPeer(addrs[i])
			for j := i + 1; j < n; j++ {
				kij, kji, id := key(), key(), wire.RandomID()
				peers[i][j] = Peer{Session: id, Seal: wire.NewSealer(kij, id), Open: wire.NewOpener(kji, id), Addr: addrs[j]}
				peers[j][i] = Peer{Session: id, Seal: wire.NewSealer(kji, id), Open: wire.NewOpener(kij, id), Addr: addrs[i]}
			}
		}
		return socks, addrs, peers
	}
	c.socks, c.addrs, c.peers = build()
	c.pingSocks, c.pingAddrs, c.pingPeers = build()
	return c
}

// run runs spec on the cluster as the coordinator does: start all, wait
// until each has settled its requests, stop all, build the report.
func (c *cluster) run(t *testing.T, spec Spec) *Report {
	t.Helper()
	spec, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	n := len(c.socks)
	nodes := make([]*node, n)
	start := time.Now()
	for i := range nodes {
		nodes[i] = startNode(context.Background(), spec, i, c.peers[i], c.pingPeers[i], c.socks[i], c.pingSocks[i], 65536, uint64(i+1), noWait)
	}
	limit := time.After(spec.Duration + drainWait(spec))
	for _, nd := range nodes {
		select {
		case <-nd.drained:
		case <-limit:
			t.Errorf("a node did not settle within %v", spec.Duration+drainWait(spec))
		}
	}
	runs := make([]*NodeRun, n)
	named := make([]Named, n)
	for i, nd := range nodes {
		runs[i] = nd.Stop()
		named[i] = Named{Name: fmt.Sprintf("n%d", i+1), Agent: c.addrs[i].String()}
	}
	return Build(spec, start, named, runs, nil)
}

func TestLoopbackThreeNodes(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	c := newCluster(t, 3)
	r := c.run(t, Spec{Duration: time.Second, Blocks: 500, Outstanding: 2, PingInterval: 50 * time.Millisecond})
	for _, nd := range r.Nodes {
		if nd.Error != "" {
			t.Errorf("%s: %s", nd.Name, nd.Error)
		}
		// One process, one namespace: its counters are the three nodes'.
		if nd.SharedNetns != 3 {
			t.Errorf("%s: namespace shared by %d nodes, want 3", nd.Name, nd.SharedNetns)
		}
	}
	// 1 at MTU 65536, or n/a (0) when other tests' datagrams crossed the
	// same loopback during the run.
	t.Logf("%.2f fragments per block shipped, %d foreign datagrams", r.Total.FragmentsPerBlock, r.Nodes[0].ForeignUDP)
	if f := r.Total.FragmentsPerBlock; (f != 0 || r.Nodes[0].ForeignUDP == 0) && (f < 1 || f > 1.05) {
		t.Errorf("%.2f fragments per unfragmented block", f)
	}
	two, three := r.Total.TwoWay, r.Total.ThreeWay
	t.Logf("%.0f blocks/s, %d received, %d lost, %d local, 3-way %.1f %%, 2-way p50 %v, 3-way p50 %v",
		r.Total.BlocksPerSec, r.Total.Received, r.Total.Lost, r.Total.LocalHits, r.Total.ThreeWayPercent, time.Duration(two.P50), time.Duration(three.P50))
	if two == nil || three == nil || two.Count < 100 || three.Count < 20 {
		t.Fatalf("3 nodes: 2-way %+v, 3-way %+v", two, three)
	}
	if len(r.Pairs) != 6 {
		t.Fatalf("%d pairs, want 6", len(r.Pairs))
	}
	for _, p := range r.Pairs {
		if !p.Balanced || p.Requested == 0 || p.Lost != 0 {
			t.Errorf("%s <- %s: requested %d, received %d, lost %d (%+v)", p.Requester, p.Server, p.Requested, p.Received, p.Lost, p.LostBy)
		}
	}
	if len(r.Pings) != 9 {
		t.Fatalf("%d ping rows, want 9 (3 nodes x 3 targets)", len(r.Pings))
	}
	for _, p := range r.Pings {
		if p.Small.Count < 5 || p.Large.Count < 5 || p.Small.AvgNs <= 0 || p.Large.AvgNs <= 0 {
			t.Errorf("pings %s -> %s: %+v %+v", p.Node, p.Target, p.Small, p.Large)
		}
	}
	if r.Verdict != VerdictOK {
		t.Errorf("verdict %s: %+v", r.Verdict, r.Problems)
	}
}

func TestLoopbackTwoNodesNoThreeWay(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	c := newCluster(t, 2)
	r := c.run(t, Spec{Duration: 500 * time.Millisecond, Blocks: 200, Outstanding: 2, CurrentShare: 0.5})
	if r.Total.ThreeWay != nil || r.Total.TwoWay == nil || r.Total.TwoWay.Count < 100 {
		t.Fatalf("2 nodes: 2-way %+v, 3-way %+v", r.Total.TwoWay, r.Total.ThreeWay)
	}
	for _, p := range r.Pairs {
		if !p.Balanced || p.ThreeWay != nil {
			t.Errorf("%s <- %s: %+v", p.Requester, p.Server, p)
		}
	}
}
