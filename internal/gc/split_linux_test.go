package gc

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/traffic"
)

// TestLoopbackSplit: three nodes on loopback split every pair's 2-way and
// 3-way receive times into all four parts from the kernel's stamps (a
// 3-way trip's server parts carry the master's too), and the text shows
// them; with NoSplit nothing is split.
func TestLoopbackSplit(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	r := c.run(t, Spec{Duration: time.Second, Blocks: 500, Outstanding: 1, NoPing: true})
	for _, p := range r.Pairs {
		for _, e := range []struct {
			hops string
			sp   *traffic.Split
			rtt  *traffic.Latency
		}{{"2-way", p.TwoWaySplit, p.TwoWay}, {"3-way", p.ThreeWaySplit, p.ThreeWay}} {
			if e.rtt == nil {
				continue
			}
			if e.sp == nil {
				t.Errorf("%s <- %s %s: no split", p.Requester, p.Server, e.hops)
				continue
			}
			for _, part := range e.sp.Parts() {
				if part.L == nil || part.L.Count == 0 {
					t.Errorf("%s <- %s %s: %s absent", p.Requester, p.Server, e.hops, part.Name)
				}
			}
			// The parts add up per block, so their means add up to the
			// receive time's mean (up to the histograms' rounding); their
			// p50s need not, and where they miss by more than 15 % the
			// report says why.
			if a := e.sp.AccountedPercent; a == nil || (*a < 100*(1-traffic.SplitTolerance) || *a > 100*(1+traffic.SplitTolerance)) && e.sp.Unaccounted == "" {
				t.Errorf("%s <- %s %s: the parts' p50s account for %v %% of p50 %v, and no reason given", p.Requester, p.Server, e.hops, a, time.Duration(e.rtt.P50))
			}
			if e.sp.AccountedPercent != nil {
				sum := 0.0
				for _, part := range e.sp.Parts() {
					sum += part.L.Mean
				}
				if sum < 0.97*e.rtt.Mean || sum > 1.03*e.rtt.Mean {
					t.Errorf("%s <- %s %s: the parts' means add up to %.0f ns, the receive time's mean is %.0f", p.Requester, p.Server, e.hops, sum, e.rtt.Mean)
				}
			}
		}
	}
	var b bytes.Buffer
	r.WriteText(&b)
	t.Logf("\n%s", b.String())
	if !strings.Contains(b.String(), "Receive times split into their parts") {
		t.Errorf("no split in the text")
	}
	c2 := newCluster(t, 2)
	off := c2.run(t, Spec{Duration: 300 * time.Millisecond, Blocks: 100, NoPing: true, NoSplit: true})
	for _, p := range off.Pairs {
		if p.TwoWaySplit != nil || p.ThreeWaySplit != nil {
			t.Errorf("NoSplit: %s <- %s split", p.Requester, p.Server)
		}
	}
}
