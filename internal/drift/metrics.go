package drift

import (
	"fmt"
	"math"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/stats"
	"github.com/interlink/interlink/internal/traffic"
)

// sample is one metric's samples in a result.
type sample struct {
	name        string
	values      []float64
	unit        ab.Unit
	lowerBetter bool
}

// compareSamples judges one metric: a change when the confidence interval
// of the shift from base to cur reached Confidence and excludes zero. One
// that could not reach it (fewer than four samples a side for 95 %) is
// not judged: NotJudged says why, and it is not counted in Compared.
func compareSamples(d *Diff, base, cur sample) {
	c, err := stats.Compare(base.values, cur.values, Confidence)
	if err != nil {
		d.NotJudged = append(d.NotJudged, fmt.Sprintf("%s (%d and %d samples)", cur.name, len(base.values), len(cur.values)))
		return
	}
	if !c.Shift.Reached() {
		d.NotJudged = append(d.NotJudged, fmt.Sprintf("%s (%d and %d samples: %s)", cur.name, len(base.values), len(cur.values), stats.TooFew("samples", Confidence)))
		return
	}
	d.Compared++
	if !c.Significant {
		return
	}
	detail := fmt.Sprintf("shift %s (%s CI %s to %s), p = %.3g", ab.Format(c.Shift.Estimate, cur.unit), stats.Pct(Confidence),
		ab.Format(c.Shift.Low, cur.unit), ab.Format(c.Shift.High, cur.unit), c.P)
	if c.Ratio.Level != 0 {
		detail = fmt.Sprintf("%.3gx (%s CI %.3g to %.3g), p = %.3g", c.Ratio.Estimate, stats.Pct(Confidence), c.Ratio.Low, c.Ratio.High, c.P)
	}
	d.add(Change{What: cur.name, Before: "median " + ab.Format(c.MedianA, cur.unit), After: "median " + ab.Format(c.MedianB, cur.unit),
		Worse: (c.Shift.Estimate > 0) == cur.lowerBetter, Detail: detail})
}

// benchSamples are a bench's per-interval samples per direction, from the
// end that receives (the receiver, or the requester of blocks): the rate,
// and for blocks the round trip.
func benchSamples(r *traffic.Report) map[string]sample {
	out := map[string]sample{}
	if r.Result == nil {
		return out
	}
	for _, f := range r.Flows {
		sd := f.Client
		if f.Server != nil && f.Server.Role == traffic.RoleReceiver {
			sd = f.Server
		}
		if sd == nil {
			continue
		}
		prefix := fmt.Sprintf("bench %s %s ", r.Spec.Mode, f.Direction)
		rate := sample{name: prefix + "rate per interval", unit: ab.UnitBitRate}
		p50 := sample{name: prefix + "round trip p50 per interval", unit: ab.UnitNs, lowerBetter: true}
		p99 := sample{name: prefix + "round trip p99 per interval", unit: ab.UnitNs, lowerBetter: true}
		for _, in := range sd.Intervals {
			rate.values = append(rate.values, in.BitsPerSec)
			if in.RTTPercentiles != nil && in.RTTPercentiles.Count > 0 {
				p50.values = append(p50.values, float64(in.RTTPercentiles.P50))
				p99.values = append(p99.values, float64(in.RTTPercentiles.P99))
			}
		}
		for _, s := range []sample{rate, p50, p99} {
			if len(s.values) > 0 {
				out[s.name] = s
			}
		}
	}
	return out
}

// compareBench judges the interval samples of each direction, and lists
// the figures that carry no noise when they change: the path MTU and the
// packets a message travels in.
func compareBench(d *Diff, base, cur *traffic.Report) {
	if base.Result == nil || cur.Result == nil {
		return
	}
	if base.Spec.Mode != cur.Spec.Mode {
		d.add(Change{What: "bench mode", Before: string(base.Spec.Mode), After: string(cur.Spec.Mode), Detail: "different tests: only the mode is compared"})
		return
	}
	bs, cs := benchSamples(base), benchSamples(cur)
	for _, k := range sortedKeys(cs) {
		if b, ok := bs[k]; ok {
			compareSamples(d, b, cs[k])
		}
	}
	for _, cf := range cur.Flows {
		for _, bf := range base.Flows {
			if bf.Direction != cf.Direction {
				continue
			}
			what := fmt.Sprintf("bench %s %s ", cur.Spec.Mode, cf.Direction)
			d.Compared++
			if b, c := bf.Summary.MTU, cf.Summary.MTU; b != c {
				d.add(Change{What: what + "path MTU", Before: fmt.Sprint(b), After: fmt.Sprint(c), Worse: c < b})
			}
			if cur.Spec.Mode == traffic.ModeTCP {
				continue
			}
			d.Compared++
			b, c := bf.Summary.FragmentsPerMessage, cf.Summary.FragmentsPerMessage
			if math.Abs(b-c) >= 0.01*math.Max(b, 1) {
				d.add(Change{What: what + "fragments per message", Before: fmt.Sprintf("%.2f", b), After: fmt.Sprintf("%.2f", c), Worse: c > b})
			}
		}
	}
}

// compareAB judges each metric's runs per arm (did arm A, or B, move
// between the experiments?) and lists a change of verdict.
func compareAB(d *Diff, base, cur *ab.Result) {
	d.Compared++
	if base.Verdict != cur.Verdict {
		order := map[ab.Verdict]int{ab.VerdictOK: 0, ab.VerdictWarning: 1, ab.VerdictCritical: 2, ab.VerdictUnknown: 3}
		d.add(Change{What: "ab verdict", Before: string(base.Verdict), After: string(cur.Verdict), Worse: order[cur.Verdict] > order[base.Verdict]})
	}
	for _, cs := range cur.Stats {
		for _, bs := range base.Stats {
			if bs.Metric != cs.Metric {
				continue
			}
			for arm, name := range []string{"A", "B"} {
				bv, _ := base.Values(cs.Metric, arm)
				cv, _ := cur.Values(cs.Metric, arm)
				compareSamples(d, sample{values: bv}, sample{name: fmt.Sprintf("ab %s arm %s", cs.Metric, name), values: cv, unit: cs.Unit, lowerBetter: cs.LowerBetter})
			}
		}
	}
}
