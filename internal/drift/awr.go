package drift

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/stats"
)

// Two saved AWR results compare as `interlink awr diff` compares their
// reports: awr.Compare matches instances by number and judges every
// metric (with several reports per side by the statistics of ab, with one
// by the size of the change alone, which each change then says). Metrics
// judged better, worse or changed are the changes; the verdicts of the
// two results, when they differ, are one more. A metric awr diff gave no
// verdict (an interval short of the level, or a figure only one report of
// a side has) is counted in NotJudged and not in Compared: it was not
// judged, so it cannot be among the items found unchanged.

// compareAWR compares AWR result cur with baseline base.
func compareAWR(d *Diff, base, cur *awr.Result) {
	d.Compared++
	if b, c := base.Summary.Status, cur.Summary.Status; b != c {
		d.add(Change{What: "awr verdict", Before: b, After: c, Worse: statusRank(c) > statusRank(b)})
	}
	ad := awr.Compare(base.Reports, cur.Reports, Confidence)
	unreached := 0
	for _, in := range ad.Instances {
		for _, m := range in.Metrics {
			// By the verdict alone: a metric with the same value in every
			// report is "unchanged" although its interval (of width 0)
			// did not reach the level, and that is a judgement.
			if awrNotJudged(m.Verdict) {
				unreached++
				continue
			}
			d.Compared++
			switch m.Verdict {
			case "better", "worse", "changed":
			default:
				continue
			}
			d.add(Change{What: fmt.Sprintf("awr instance %d%s %s", in.Number, nameOf(in.Name), m.Metric),
				Before: awrValue(m.MedianBefore, m.Unit, len(m.Before)), After: awrValue(m.MedianAfter, m.Unit, len(m.After)),
				Worse: m.Verdict == "worse", Detail: awrDetail(m, ad.OneSample)})
		}
	}
	if unreached > 0 {
		d.NotJudged = append(d.NotJudged, fmt.Sprintf("awr: %d metric(s) of %d and %d reports (%s)", unreached, len(base.Reports), len(cur.Reports), stats.TooFew("reports", Confidence)))
	}
}

// awrNotJudged says whether awr diff's verdict v is none: "no verdict:
// ..." (too few reports for the level, or the figure on one report of a
// side) or "no statistics: ...".
func awrNotJudged(v string) bool {
	return strings.HasPrefix(v, "no verdict") || strings.HasPrefix(v, "no statistics")
}

func nameOf(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// statusRank orders the verdicts of rules.Summary.
func statusRank(s string) int {
	return slices.Index([]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}, s)
}

func awrValue(v float64, unit string, n int) string {
	s := strconv.FormatFloat(v, 'g', 6, 64)
	if unit != "" && unit != "count" {
		if strings.HasPrefix(unit, "/") {
			s += unit
		} else {
			s += " " + unit
		}
	}
	if n > 1 {
		s = "median " + s
	}
	return s
}

// awrDetail says how the metric was judged.
func awrDetail(m awr.MetricDiff, oneSample bool) string {
	var parts []string
	if m.Ratio != nil {
		parts = append(parts, fmt.Sprintf("%.3gx", *m.Ratio))
	}
	if m.Better != "" {
		parts = append(parts, m.Better+" is better")
	}
	switch {
	case m.RatioCI != nil && m.P != nil:
		parts = append(parts, fmt.Sprintf("%s CI %.3g to %.3g, p = %.3g", stats.Pct(Confidence), m.RatioCI.Low, m.RatioCI.High, *m.P))
	case m.Shift != nil && m.P != nil:
		parts = append(parts, fmt.Sprintf("shift %.3g (%s CI %.3g to %.3g), p = %.3g", m.Shift.Estimate, stats.Pct(Confidence), m.Shift.Low, m.Shift.High, *m.P))
	case oneSample || len(m.Before) < 2 || len(m.After) < 2:
		parts = append(parts, fmt.Sprintf("one report per side: a change beyond %g %%, not a statistic", stats.OneSampleThreshold*100))
	}
	return strings.Join(parts, "; ")
}

// awrSummary says an AWR result's databases, reports and verdict.
func awrSummary(r *awr.Result) string {
	var dbs []string
	inst := 0
	for _, rep := range r.Reports {
		name := rep.DBName
		if rep.BeginSnap != nil && rep.EndSnap != nil {
			name += fmt.Sprintf(" %d-%d", rep.BeginSnap.ID, rep.EndSnap.ID)
		}
		if !slices.Contains(dbs, name) {
			dbs = append(dbs, name)
		}
		inst += len(rep.Instances)
	}
	if len(dbs) > 3 {
		dbs = append(dbs[:3], "...")
	}
	s := r.Summary
	return fmt.Sprintf("%d report(s) (%s), %d instance(s): %s: %d critical, %d warning, %d info",
		len(r.Reports), strings.Join(dbs, ", "), inst, s.Status, s.Critical, s.Warning, s.Info)
}

// awrDiffSummary says what an awr diff found.
func awrDiffSummary(d *awr.Diff) string {
	sample := ""
	if d.OneSample {
		sample = " (one sample each)"
	}
	return fmt.Sprintf("%d before, %d after%s: %d better, %d worse", len(d.Before), len(d.After), sample, d.Improved, d.Worsened)
}
