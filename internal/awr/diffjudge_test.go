package awr

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/interlink/interlink/internal/stats"
)

// TestAADiffFamily simulates awr diffs of reports taken before and after
// no change at all: each report is a real 19c RAC report (awrgrpt, every
// instance) with every figure in it multiplied by its own lognormal noise
// of about 10 %, so that both sides come from one distribution and every
// better, worse or changed is false. With two and three reports a side no
// interval reaches 95 %: no metric may get a verdict, and every metric
// with statistics must say how many reports would; yet the intervals,
// 66.7 % and 90 % ones, exclude 0 somewhere in nearly every diff (checked,
// so the test fails if verdicts were read off them, as before). With four
// to eight a side, Holm's correction across the metrics keeps the share of
// diffs with any false verdict within 5 %, up to the binomial allowance a
// correct method exceeds with a fixed seed at most once in a thousand;
// judged one by one (interval alone), the same metrics give a false
// verdict in most diffs, which the test checks too.
func TestAADiffFamily(t *testing.T) {
	const experiments, conf = 300, 0.95
	base := parseString(t, read(t, "19c-awrgrpt-rac.txt"), "base")
	limit := stats.BinomialLimit(experiments, 1-conf, 1e-3)
	rng := rand.New(rand.NewPCG(34, 35))
	for _, perSide := range []int{2, 3, 4, 6, 8} {
		falseDiffs, rawDiffs, family := 0, 0, 0
		for range experiments {
			var before, after []Report
			for range perSide {
				before, after = append(before, jittered(rng, base)), append(after, jittered(rng, base))
			}
			d := Compare(before, after, conf)
			family = d.HolmFamily
			anyVerdict, anyRaw := false, false
			for _, in := range d.Instances {
				for _, m := range in.Metrics {
					if m.P == nil {
						t.Fatalf("%d a side: %s without statistics: %q", perSide, m.Metric, m.Verdict)
					}
					switch m.Verdict {
					case "better", "worse", "changed":
						anyVerdict = true
						if !m.Shift.Reached() {
							t.Fatalf("%d a side: %s %s from a %.3g interval", perSide, m.Metric, m.Verdict, m.Shift.Achieved)
						}
					}
					if perSide < 4 && m.Verdict != "no verdict: too few reports for 95 % (need 4 a side)" && m.Verdict != "unchanged" {
						t.Fatalf("%d a side: %s: %q", perSide, m.Metric, m.Verdict)
					}
					anyRaw = anyRaw || m.Shift.Low > 0 || m.Shift.High < 0
				}
			}
			if anyVerdict {
				falseDiffs++
			}
			if anyRaw {
				rawDiffs++
			}
		}
		t.Logf("%d reports a side, %d metrics with statistics: a false verdict in %d of %d diffs (limit %d); an interval excluding 0 in %d",
			perSide, family, falseDiffs, experiments, limit, rawDiffs)
		if family < 30 {
			t.Fatalf("only %d metrics with statistics: not the shape of an awr diff", family)
		}
		if falseDiffs > limit {
			t.Errorf("%d a side: a false verdict in %d diffs of %d, above %d", perSide, falseDiffs, experiments, limit)
		}
		if rawDiffs < experiments/2 {
			t.Errorf("%d a side: an interval excluded 0 in only %d diffs: the simulation cannot show what the rule and Holm's correction prevent", perSide, rawDiffs)
		}
	}
}

// jittered returns a copy of r whose every figure is multiplied by its own
// lognormal factor (sd 0.1); zeros stay zero.
func jittered(rng *rand.Rand, r *Report) Report {
	c := *r
	c.Instances = make([]Instance, len(r.Instances))
	for i := range r.Instances {
		v := reflect.ValueOf(&c.Instances[i]).Elem()
		copyJitter(rng, v, reflect.ValueOf(r.Instances[i]))
	}
	return c
}

// copyJitter sets dst to a deep copy of src with each float64 jittered:
// pointers and slices are new, so the copies share nothing.
func copyJitter(rng *rand.Rand, dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Float64:
		dst.SetFloat(src.Float() * math.Exp(0.1*rng.NormFloat64()))
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Elem().Type())
		copyJitter(rng, p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				copyJitter(rng, dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			copyJitter(rng, s.Index(i), src.Index(i))
		}
		dst.Set(s)
	default:
		dst.Set(src)
	}
}

// TestDiffFigureOnOneReportOfASide: two reports a side, one of the after
// reports from an idle instance (ping to target 2 counted 0 times, no
// block received, so no receive times). Those metrics have one sample
// after: they get no statistics and no verdict (before, the size of the
// change judged them "worse" and "better" among metrics judged at 95 %,
// and the worse set exit code 1), and the idle report's missing figures
// are not medians of 0.
func TestDiffFigureOnOneReportOfASide(t *testing.T) {
	lost96 := parseString(t, read(t, "19c-public-layout-lost96.html"), "lost96")
	lost21 := parseString(t, read(t, "19c-public-layout-lost21.html"), "lost21")
	idle := parseString(t, read(t, "19c-public-layout-idle.html"), "idle")
	idle.DBID = lost96.DBID // the same database, its instance idle this time
	d := Compare([]Report{*lost96, *lost21}, []Report{*idle, *lost96}, 0.95)
	if len(d.Instances) != 1 {
		t.Fatalf("%d instances compared, want 1", len(d.Instances))
	}
	seen := map[string]bool{}
	for _, m := range d.Instances[0].Metrics {
		switch m.Metric {
		case "gc_cr_receive_ms", "ping_8k_ms to 2", "ping_500b_ms to 2":
			seen[m.Metric] = true
			if len(m.After) != 1 {
				t.Errorf("%s: after %v, want the one report that has it", m.Metric, m.After)
			}
			want := "no verdict: 2 report(s) before and 1 after have this figure; too few reports for 95 % (need 4 a side)"
			if m.Verdict != want {
				t.Errorf("%s: verdict %q, want %q", m.Metric, m.Verdict, want)
			}
			if m.MedianAfter == 0 {
				t.Errorf("%s: after median 0: the idle report's absent figure was counted", m.Metric)
			}
		case "gc_current_receive_ms":
			// 1.1027 in both lost reports: the same value everywhere.
			if m.Verdict != "unchanged" {
				t.Errorf("%s: %q, want unchanged (one value everywhere)", m.Metric, m.Verdict)
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("compared %v; want the cr receive time and both pings to 2", seen)
	}
	if d.Worsened != 0 || d.Improved != 0 {
		t.Errorf("%d worse, %d better: no metric reaches 95 %% with two reports a side", d.Worsened, d.Improved)
	}
}
