package drift

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/gc"
)

// TestGCPairs compares the blackhole lab's gc run (node2's port at 1500:
// node2's pairs lose every block) with the same run after the port was
// fixed, and with runs nudged within and beyond the one-sample threshold.
func TestGCPairs(t *testing.T) {
	base := load(t, "lab-gc.json").(*gc.Report)
	fixed := load(t, "lab-gc.json").(*gc.Report)
	fixed.Verdict = gc.VerdictOK
	for i := range fixed.Pairs {
		p := &fixed.Pairs[i]
		if p.Lost > 0 {
			p.Received, p.Lost, p.BlocksPerSec = p.Requested, 0, 5000
		}
	}
	d := compare(t, base, fixed)
	if d.Kind != gc.Schema || d.Verdict != Changed {
		t.Fatalf("fixed port: %s %s, changes %+v", d.Kind, d.Verdict, d.Changes)
	}
	got := map[string]Change{}
	for _, c := range d.Changes {
		got[c.What] = c
	}
	for _, w := range []string{"gc verdict", "gc node1 <- node2 lost blocks", "gc node1 <- node2 blocks/s", "gc node3 <- node2 lost blocks"} {
		if c, ok := got[w]; !ok || c.Worse {
			t.Errorf("%s: %+v, want a change for the better", w, c)
		}
	}
	if c := got["gc node1 <- node2 lost blocks"]; c.Before != "24" || c.After != "0" || !strings.Contains(c.Detail, "one run per side") {
		t.Errorf("lost blocks: %+v", c)
	}
	if _, ok := got["gc node1 <- node3 blocks/s"]; ok {
		t.Errorf("an unchanged pair changed: %+v", d.Changes)
	}
	// Back from fixed to the blackhole: worse.
	if d := compare(t, fixed, base); d.Verdict != Worse || d.Changes[0].What != "gc verdict" || d.Changes[0].After != gc.VerdictFailed {
		t.Errorf("blackhole again: %s, %+v", d.Verdict, d.Changes)
	}
	// Two cluster runs with --bench gc compare their gc runs too.
	bc, cc := &cluster.Result{GC: &cluster.GC{Report: base}}, &cluster.Result{GC: &cluster.GC{Report: fixed}}
	if d := compare(t, bc, cc); d.Kind != cluster.Schema || len(d.Changes) != len(got) {
		t.Errorf("cluster runs: %s, %d changes, want the gc run's %d", d.Kind, len(d.Changes), len(got))
	}

	// The healthy pair's 2-way p50 2 % slower is within one sample's
	// threshold; 20 % slower is worse. A pair gone is worse.
	for _, tc := range []struct {
		factor float64
		want   string
	}{{1.02, NoChange}, {1.2, Worse}} {
		cur := load(t, "lab-gc.json").(*gc.Report)
		for i := range cur.Pairs {
			if p := &cur.Pairs[i]; p.TwoWay != nil && p.TwoWay.Count > 0 {
				p.TwoWay.P50 = int64(float64(p.TwoWay.P50) * tc.factor)
			}
		}
		d := compare(t, base, cur)
		if d.Verdict != tc.want {
			t.Errorf("2-way p50 x%g: %s, want %s: %+v", tc.factor, d.Verdict, tc.want, d.Changes)
		}
		if tc.want == Worse && !strings.Contains(d.Changes[0].What, "2-way receive time p50") {
			t.Errorf("2-way p50 x%g: %+v", tc.factor, d.Changes)
		}
	}
	cur := load(t, "lab-gc.json").(*gc.Report)
	cur.Pairs = cur.Pairs[1:]
	if d := compare(t, base, cur); d.Verdict != Worse || d.Changes[0].What != "gc node1 <- node2 pair" {
		t.Errorf("a pair gone: %s %+v", d.Verdict, d.Changes)
	}
	if _, err := Compare(base, load(t, "lab-bench-blocks.json")); err == nil || !strings.Contains(err.Error(), "bench --mode gc result") {
		t.Errorf("gc against bench: %v", err)
	}
}
