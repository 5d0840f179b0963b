package awr

import (
	"math"
	"strings"
	"testing"
)

// TestDiffByHand: awr diff of the 11.2.0.3 pair gives what a person
// computes from the two reports. By hand: avg cr block receive time 2.4
// ms before, 0.6 after: 0.6 / 2.4 = 0.25, -75 %. Transactions 412.6/s
// and 417.2/s: 417.2 / 412.6 = 1.01115, +1.1 % (under 5 %: unchanged).
// Lost blocks (Instance Activity Stats, gc blocks lost): 1,630 before,
// 0 after; the lost-block waits 1,204 + 310 = 1,514 before, none after. DB time per
// transaction: 3.1 / 412.6 = 0.0075133 s before, 2.2 / 417.2 = 0.0052733
// after, ratio 0.70186. 8 KiB ping to instance 2: 0.35 / 2.85 = 0.12281.
func TestDiffByHand(t *testing.T) {
	before := parseString(t, read(t, "11.2.0.3-awrrpt-rac-mtu1500.txt"), "before")
	after := parseString(t, read(t, "11.2.0.3-awrrpt-rac-mtu9000.txt"), "after")
	d := Compare([]Report{*before}, []Report{*after}, 0.95)
	if !d.OneSample || len(d.Instances) != 1 {
		t.Fatalf("one sample %v, %d instances", d.OneSample, len(d.Instances))
	}
	got := map[string]MetricDiff{}
	for _, m := range d.Instances[0].Metrics {
		got[m.Metric] = m
	}
	for _, c := range []struct {
		metric        string
		before, after float64
		ratio         float64
		verdict       string
	}{
		{"gc_cr_receive_ms", 2.4, 0.6, 0.25, "better"},
		{"transactions_per_sec", 412.6, 417.2, 1.01115, "unchanged"},
		{"gc_lost_blocks", 1630, 0, 0, "better"},
		{"gc_lost_block_waits", 1514, 0, 0, "better"},
		{"db_time_per_txn", 0.0075133, 0.0052733, 0.70186, "better"},
		{"ping_8k_ms to 2", 2.85, 0.35, 0.12281, "better"},
		{"estd_interconnect_kb_per_sec", 40509.86, 41021.33, 1.01263, "unchanged"},
	} {
		m, ok := got[c.metric]
		if !ok {
			t.Errorf("%s missing", c.metric)
			continue
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(1, math.Abs(b)) }
		if !near(m.MedianBefore, c.before) || !near(m.MedianAfter, c.after) || m.Ratio == nil || !near(*m.Ratio, c.ratio) || m.Verdict != c.verdict {
			t.Errorf("%s: %v -> %v ratio %v %s; by hand %v -> %v ratio %v %s", c.metric, m.MedianBefore, m.MedianAfter, m.Ratio, m.Verdict, c.before, c.after, c.ratio, c.verdict)
		}
	}
	if d.Worsened != 0 || d.Improved == 0 {
		t.Errorf("improved %d worsened %d", d.Improved, d.Worsened)
	}
}

// TestDiffSeveral: several reports per side get the statistics of ab:
// the shift's interval, the ratio's, a p-value, Holm-adjusted across the
// metrics. Three reports a side cannot give a 95 % interval (90 % at
// most): a receive time 75 % lower gets no verdict, and the diff says how
// many reports would. Eight a side judge it better.
func TestDiffSeveral(t *testing.T) {
	b := parseString(t, read(t, "11.2.0.3-awrrpt-rac-mtu1500.txt"), "b")
	a := parseString(t, read(t, "11.2.0.3-awrrpt-rac-mtu9000.txt"), "a")
	for _, tc := range []struct {
		perSide  int
		verdict  string
		achieved float64
	}{{3, "no verdict: too few reports for 95 % (need 4 a side)", 0.9}, {8, "better", 0.95}} {
		var before, after []Report
		for i := range tc.perSide {
			x, y := *b, *a
			x.Instances = cloneInstances(b.Instances, 0.95+float64(i)*0.1/float64(tc.perSide))
			y.Instances = cloneInstances(a.Instances, 1+float64(i)*0.02)
			before, after = append(before, x), append(after, y)
		}
		d := Compare(before, after, 0.95)
		if d.OneSample {
			t.Fatalf("%d per side called one sample", tc.perSide)
		}
		family := 0
		var cr *MetricDiff
		for i, m := range d.Instances[0].Metrics {
			if m.P != nil {
				family++
			}
			if m.Metric == "gc_cr_receive_ms" {
				cr = &d.Instances[0].Metrics[i]
			}
		}
		if cr == nil {
			t.Fatal("gc_cr_receive_ms missing")
		}
		if cr.Shift == nil || cr.RatioCI == nil || cr.P == nil || cr.PHolm == nil || cr.Verdict != tc.verdict {
			t.Fatalf("%d per side: %+v", tc.perSide, *cr)
		}
		if cr.RatioCI.High >= 1 || cr.RatioCI.Achieved < tc.achieved || cr.RatioCI.Achieved > tc.achieved+0.01 {
			t.Errorf("%d per side: ratio interval %v to %v at %v", tc.perSide, cr.RatioCI.Low, cr.RatioCI.High, cr.RatioCI.Achieved)
		}
		if d.HolmFamily != family || family < 10 || *cr.PHolm > 0.05 != (tc.perSide == 3) {
			t.Errorf("%d per side: Holm family %d of %d metrics with statistics, p %v, Holm p %v", tc.perSide, d.HolmFamily, family, *cr.P, *cr.PHolm)
		}
		if tooFew := strings.Contains(d.Note, "too few reports for 95 % (need 4 a side)"); tooFew != (tc.perSide == 3) || (d.Improved == 0) == (tc.perSide == 8) {
			t.Errorf("%d per side: improved %d, note %q", tc.perSide, d.Improved, d.Note)
		}
	}
}

// cloneInstances copies ins with the workload's receive times times k.
func cloneInstances(ins []Instance, k float64) []Instance {
	out := make([]Instance, len(ins))
	copy(out, ins)
	for i := range out {
		w := *out[i].GCWorkload
		w.CRReceiveMs = f(*w.CRReceiveMs * k)
		out[i].GCWorkload = &w
	}
	return out
}
