package awr

import (
	"fmt"

	"github.com/interlink/interlink/internal/stats"
)

// pending is the verdict of a metric whose statistics are made and whose
// judgement waits for the others' p-values (judgeFamily).
const pending = "pending"

// Verdicts of a metric with statistics that gives no better or worse.
const (
	noDifference = "no detectable difference"
	noAfterHolm  = "no detectable difference after Holm's correction"
)

// judgeFamily judges the metrics with statistics as ab judges its
// secondary metrics: a difference only where the interval reached the
// confidence asked for, excludes 0, and the Mann-Whitney p-value,
// Holm-adjusted across every metric of the diff with statistics, is at
// most 1 - conf. With some twenty metrics per instance, noise alone
// would otherwise call one of them better or worse in most diffs. An
// interval that did not reach the level (two or three reports a side for
// 95 %) gives no verdict, and the note says how many reports would. It
// then counts the metrics judged better and worse, whichever way.
func judgeFamily(d *Diff, conf float64) {
	var family []*MetricDiff
	var ps []float64
	for i := range d.Instances {
		for j := range d.Instances[i].Metrics {
			if md := &d.Instances[i].Metrics[j]; md.Verdict == pending {
				family, ps = append(family, md), append(ps, *md.P)
			}
		}
	}
	d.HolmFamily = len(family)
	unreached := 0
	for k, adj := range stats.Holm(ps) {
		md := family[k]
		md.PHolm = f(adj)
		excludes := md.Shift.Low > 0 || md.Shift.High < 0
		switch {
		case sameEverywhere(md):
			md.Verdict = direction(md, false, false)
		case !md.Shift.Reached():
			md.Verdict = "no verdict: " + stats.TooFew("reports", conf)
			unreached++
		case !excludes:
			md.Verdict = noDifference
		case adj > 1-conf:
			md.Verdict = noAfterHolm
		default:
			md.Verdict = direction(md, true, md.Shift.Estimate > 0)
		}
	}
	if unreached > 0 {
		d.Note += fmt.Sprintf("; %s: %d metric(s) have only a narrower interval, labelled with the level it has, and no verdict", stats.TooFew("reports", conf), unreached)
	}
	for _, in := range d.Instances {
		for _, md := range in.Metrics {
			switch md.Verdict {
			case "better":
				d.Improved++
			case "worse":
				d.Worsened++
			}
		}
	}
}

// sameEverywhere: every report on both sides gave the metric one value
// (often 0: no lost blocks, no drops), which is no change at any level.
func sameEverywhere(md *MetricDiff) bool {
	for _, v := range append(append([]float64(nil), md.Before...), md.After...) {
		if v != md.Before[0] {
			return false
		}
	}
	return true
}
