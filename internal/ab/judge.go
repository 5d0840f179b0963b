package ab

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/interlink/interlink/internal/stats"
)

// AdviceTargetPct is the half-width, in percent of A, that the advice
// says how many runs would reach.
const AdviceTargetPct = 1.0

// Advice is how many runs per arm would narrow a metric's interval to
// +-TargetPct % of A, read off the interval itself: its half-width
// shrinks as 1/sqrt(runs), so RunsPerArm is ceil(N (HalfWidthPct /
// TargetPct)^2). HalfWidthPct and N are rounded to the three significant
// digits the text prints, so the printed arithmetic checks exactly.
type Advice struct {
	// HalfWidthPct is half the interval's width in percent of A: half of
	// the ratio interval's high minus low, times 100, or for a metric
	// without a ratio the shift interval's half-width over A's median.
	HalfWidthPct float64 `json:"half_width_percent"`
	// N is the runs per arm behind the interval (the harmonic mean of the
	// two arms' counts when a run failed).
	N          float64 `json:"n"`
	TargetPct  float64 `json:"target_percent"`
	RunsPerArm int     `json:"runs_per_arm"`
}

// compareArms fills ms's comparison of b against a: the interval, the
// p-value and the advice, all from one Hodges-Lehmann comparison.
// Whether the difference counts is judged later, with the other metrics.
func compareArms(ms *MetricStats, a, b []float64) {
	c, err := stats.Compare(a, b, ms.Confidence)
	if err != nil {
		ms.Error = fmt.Sprintf("%d runs of A and %d of B gave a value: %v", ms.N[0], ms.N[1], err)
		return
	}
	ms.Shift, ms.P = c.Shift, c.P
	if c.Ratio.Level != 0 {
		ratio := c.Ratio
		ms.Ratio = &ratio
	}
	p := c.Precision
	if finite(p.HalfWidth) {
		ms.Detectable = p.HalfWidth
	}
	// An interval below the level is a narrower level's: scaling its width
	// would not say what the level asked for needs, which the summary
	// names instead.
	if c.Shift.Reached() && finite(p.HalfWidthPct) && p.HalfWidthPct > 0 {
		p.HalfWidthPct, p.N = sig3(p.HalfWidthPct), sig3(p.N)
		ms.Advice = &Advice{HalfWidthPct: p.HalfWidthPct, N: p.N, TargetPct: AdviceTargetPct, RunsPerArm: p.RunsFor(AdviceTargetPct)}
		ms.RunsFor1Pct = ms.Advice.RunsPerArm
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func sig3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

// primaryMetrics returns the metrics that are the experiment's question,
// in the metrics' order, and the rule that chose them: those an
// expectation names ("expect"), else the first metric ("first metric":
// the first --metric, or the first of the mode's defaults, its headline
// figure).
func primaryMetrics(ms []Metric, expect []Expectation) ([]string, string) {
	var p []string
	for _, m := range ms {
		if slices.ContainsFunc(expect, func(e Expectation) bool { return e.Metric == m.Name }) {
			p = append(p, m.Name)
		}
	}
	switch {
	case len(p) > 0:
		return p, "expect"
	case len(ms) > 0:
		return []string{ms[0].Name}, "first metric"
	}
	return nil, ""
}

// judgeMetrics decides for each metric whether B differs from A: none
// whose interval did not reach the confidence asked for (too few runs);
// else a primary metric when its interval excludes zero (the nominal
// level), a secondary one when its interval excludes zero and its Mann-Whitney p-value,
// Holm-adjusted across the secondary metrics that have statistics, is at
// most 1 - confidence, so that the chance of one or more secondary metrics
// called different when none is stays at most that level. It writes each
// summary and returns the size of the Holm family.
func judgeMetrics(all []MetricStats, conf float64) int {
	var idx []int
	var ps []float64
	for i, st := range all {
		if !st.Primary && st.Error == "" {
			idx, ps = append(idx, i), append(ps, st.P)
		}
	}
	for k, adj := range stats.Holm(ps) {
		all[idx[k]].PHolm = adj
	}
	for i := range all {
		st := &all[i]
		if st.Error != "" {
			st.Summary = "no statistics: " + st.Error
			continue
		}
		excludes := st.Shift.Reached() && (st.Shift.Low > 0 || st.Shift.High < 0)
		st.Significant = excludes && (st.Primary || st.PHolm <= 1-conf)
		st.Better = ""
		if st.Significant {
			st.Better = "B"
			if (st.Shift.Estimate > 0) == st.LowerBetter {
				st.Better = "A"
			}
		}
		st.Summary = summary(*st, len(idx))
	}
	return len(idx)
}

// summary says the verdict in words, with the advice where the interval
// includes zero.
func summary(ms MetricStats, family int) string {
	level := stats.Pct(ms.Confidence)
	b := "B is A " + signed(ms.Shift.Estimate, ms.Unit)
	ci := signed(ms.Shift.Low, ms.Unit) + " to " + signed(ms.Shift.High, ms.Unit)
	if ms.Ratio != nil {
		b = fmt.Sprintf("B is %.3gx A", ms.Ratio.Estimate)
		ci = fmt.Sprintf("%.3g to %.3g", ms.Ratio.Low, ms.Ratio.High)
	}
	switch {
	case ms.Significant:
		judged := "better"
		if ms.Better == "A" {
			judged = "worse"
		}
		holm := ""
		if !ms.Primary {
			holm = fmt.Sprintf("; Holm p %.3g", ms.PHolm)
		}
		return fmt.Sprintf("%s (%s CI %s%s): %s", b, level, ci, holm, judged)
	case ms.Shift.Low == 0 && ms.Shift.High == 0 && ms.Min == ms.Max && ms.Min[0] == ms.Min[1]:
		return "no difference: the same value in every run"
	case !ms.Shift.Reached():
		return fmt.Sprintf("no verdict: %s; %s (%s %s)", stats.TooFew("runs", ms.Confidence), b, ms.Shift.CILabel(), ci)
	case ms.Shift.Low > 0 || ms.Shift.High < 0:
		return fmt.Sprintf("no difference after Holm's correction: %s (%s CI %s), but its p %.3g is %.3g Holm-adjusted across %d secondary metrics, above %.3g",
			b, level, ci, ms.P, ms.PHolm, family, 1-ms.Confidence)
	}
	if ms.Ratio != nil {
		ci = fmt.Sprintf("%+.1f %% to %+.1f %%", (ms.Ratio.Low-1)*100, (ms.Ratio.High-1)*100)
	}
	return fmt.Sprintf("no detectable difference: the %s CI %s includes 0", level, ci) + advice(ms)
}

// advice says how wide the interval is and how many runs per arm would
// narrow it to the target, as arithmetic on the printed numbers.
func advice(ms MetricStats) string {
	a := ms.Advice
	if a == nil {
		return ""
	}
	hw := fmt.Sprintf("%.3g %%", a.HalfWidthPct)
	if ms.Ratio == nil {
		hw = fmt.Sprintf("%s, %.3g %% of A's median", Format(ms.Detectable, ms.Unit), a.HalfWidthPct)
	}
	n := strconv.FormatFloat(a.N, 'g', -1, 64)
	if float64(a.RunsPerArm) <= math.Ceil(a.N) {
		return fmt.Sprintf(" (half-width %s at %s runs per arm: within +-%g %% already)", hw, n, a.TargetPct)
	}
	s := fmt.Sprintf(" (half-width %s at %s runs per arm); about %s * (%.3g / %g)^2 = %d runs per arm would narrow it to +-%g %%",
		hw, n, n, a.HalfWidthPct, a.TargetPct, a.RunsPerArm, a.TargetPct)
	if a.RunsPerArm > MaxRuns {
		s += fmt.Sprintf(", more than --runs takes (%d): find the noise's cause first", MaxRuns)
	}
	return s
}
