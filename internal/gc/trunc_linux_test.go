package gc

import (
	"net"
	"testing"
	"time"
)

// TestLoopbackTruncated: datagrams larger than anything of the run reach
// a node while it runs. It reads them short (MSG_TRUNC) and counts them as
// truncated, not as dropped garbage nor as received; the report says so
// (a warning, not network loss) and the run's blocks are unaffected.
func TestLoopbackTruncated(t *testing.T) {
	t.Parallel() // a paced run of fixed length on sockets of its own: bound by waiting
	c := newCluster(t, 2)
	u, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(c.addrs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		for range 3 {
			u.Write(make([]byte, 60000))
		}
	}()
	r := c.run(t, Spec{Duration: 500 * time.Millisecond, Blocks: 200, Outstanding: 2})
	n1 := r.Nodes[0]
	t.Logf("n1: truncated %d, dropped %d, received %d, lost %d; problems %+v", n1.Truncated, n1.Dropped, n1.Received, n1.Lost, r.Problems)
	if n1.Truncated != 3 || n1.Dropped != 0 || r.Nodes[1].Truncated != 0 || r.Total.Lost != 0 {
		t.Errorf("n1 truncated %d, dropped %d; n2 truncated %d; lost %d", n1.Truncated, n1.Dropped, r.Nodes[1].Truncated, r.Total.Lost)
	}
	found := false
	for _, p := range r.Problems {
		found = found || p.Problem == ProblemTruncated && !p.Critical
	}
	if !found || r.Verdict != VerdictWarning {
		t.Errorf("verdict %s, problems %+v", r.Verdict, r.Problems)
	}
}
