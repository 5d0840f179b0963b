package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/stats"
)

// Arm colours: A blue, B orange (Okabe-Ito), warm-up and failed runs grey.
const (
	colorA    = "#0072b2"
	colorB    = "#e69f00"
	colorGrey = "#9e9e9e"
)

// abSection renders an experiment: the arms, per metric every run's value
// in run order (so drift shows) with each arm's median, the comparison of
// B with A as an interval, and the expectations with the verdict.
func abSection(r *ab.Result) section {
	s := section{Kind: "ab", Title: "A/B experiment", Status: string(r.Verdict), Badge: string(r.Verdict)}
	if r.Verdict == ab.VerdictUnknown {
		s.Status = "unknown"
	}
	abIntro(&s, r)
	abExpectations(&s, r)
	if r.Wakes != nil && r.Wakes.Note != "" {
		s.para("Note: %s.", r.Wakes.Note)
	}
	var warn []string
	for _, l := range r.LimitedBy {
		warn = append(warn, "cut short by "+l)
	}
	if r.Interrupted {
		warn = append(warn, "interrupted: the statistics cover the runs made before Ctrl-C")
	}
	s.list(warn)
	if len(r.Stats) > 0 {
		s.chart(fmt.Sprintf("B against A per metric: the dot is the estimate, the bar its %[1]s confidence interval (ratio B/A - 1 where the values are positive, otherwise the shift); green B better, red B worse, grey no detectable difference (or too few runs to reach %[1]s: such a bar is a narrower interval, labelled with its level).", stats.Pct(r.Confidence)),
			forest(r))
	}
	for _, st := range r.Stats {
		abMetric(&s, r, st)
	}
	failed := 0
	for _, run := range r.Runs {
		if run.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		s.note("%d run(s) failed and are left out of the statistics.", failed)
	}
	return s
}

// abIntro says how the experiment ran, its arms, and its question.
func abIntro(s *section, r *ab.Result) {
	made := 0
	for _, run := range r.Runs {
		if run.OK() {
			made++
		}
	}
	s.para("%d runs per arm after %d warm-up, %s order, %s confidence; %d measured runs.",
		r.RunsPerArm, r.Warmup, strings.ToUpper(string(r.Order)), stats.Pct(r.Confidence), made)
	t := &table{Head: []string{"arm", "command", "prepare"}}
	for _, a := range []ab.Arm{r.A, r.B} {
		t.Rows = append(t.Rows, row(a.Name, a.CommandLine(), a.Prepare))
	}
	s.table(t)
	if len(r.Primary) > 0 {
		why := "the first metric, no expectation given"
		if r.PrimaryFrom == "expect" {
			why = "named by an expectation"
		}
		s.para("The question: %s (%s), judged at %s.", strings.Join(r.Primary, ", "), why, stats.Pct(r.Confidence))
		if r.HolmFamily > 0 {
			s.para("The other metrics are secondary, Holm-corrected across %d: one counts as different only when its Holm-adjusted p is at most %.3g, which keeps the chance of any false difference among them at most %.3g %%.",
				r.HolmFamily, 1-r.Confidence, (1-r.Confidence)*100)
		}
	}
}

// abExpectations tables the expectations and their outcomes.
func abExpectations(s *section, r *ab.Result) {
	if len(r.Expect) == 0 {
		return
	}
	et := &table{Head: []string{"expectation", "outcome", "reason"}}
	for _, e := range r.Expect {
		cls := map[ab.Outcome]string{ab.Holds: "ok", ab.Contradicted: "critical", ab.Inconclusive: "warning"}[e.Outcome]
		et.Rows = append(et.Rows, []cell{{Text: e.Text}, {Text: string(e.Outcome), Class: cls}, {Text: e.Reason}})
	}
	s.heading("Expectations")
	s.table(et)
}

// abMetric renders one metric: its summary, each arm's figures, every
// run's value in order, and drift and outliers.
func abMetric(s *section, r *ab.Result, st ab.MetricStats) {
	dir := "higher is better"
	if st.LowerBetter {
		dir = "lower is better"
	}
	if len(r.Primary) > 0 {
		dir += map[bool]string{true: "; primary", false: "; secondary"}[st.Primary]
	}
	s.heading(fmt.Sprintf("%s (%s)", st.Metric, dir))
	s.para("%s", st.Summary)
	if st.Error == "" {
		s.table(&table{Head: []string{"", "runs", "median", "min", "max"}, Rows: [][]cell{
			{{Text: "A"}, {Text: fmt.Sprint(st.N[0]), Class: "num"}, {Text: ab.Format(st.Median[0], st.Unit), Class: "num"}, {Text: ab.Format(st.Min[0], st.Unit), Class: "num"}, {Text: ab.Format(st.Max[0], st.Unit), Class: "num"}},
			{{Text: "B"}, {Text: fmt.Sprint(st.N[1]), Class: "num"}, {Text: ab.Format(st.Median[1], st.Unit), Class: "num"}, {Text: ab.Format(st.Min[1], st.Unit), Class: "num"}, {Text: ab.Format(st.Max[1], st.Unit), Class: "num"}},
		}})
	}
	s.chart("Every run's value in run order (blue A, orange B; hollow grey: warm-up, not counted); dashed lines are each arm's median.", strip(r, st))
	var notes []string
	for arm, rho := range st.Drift {
		if rho != nil {
			notes = append(notes, fmt.Sprintf("drift: arm %s changed over its runs (Spearman rho %+.2f): the system changed during the experiment", [2]string{"A", "B"}[arm], *rho))
		}
	}
	if len(st.Outliers) > 0 {
		idx := make([]string, len(st.Outliers))
		for i, o := range st.Outliers {
			idx[i] = fmt.Sprint(o + 1)
		}
		notes = append(notes, "outliers: run(s) "+strings.Join(idx, ", ")+" lie far from their arm's median")
	}
	s.list(notes)
}

// strip plots one metric's value of every run against its position in
// the run order, coloured by arm, with each arm's median.
func strip(r *ab.Result, st ab.MetricStats) template.HTML {
	var xs, ys []float64
	for _, run := range r.Runs {
		if v, ok := run.Metrics[st.Metric]; ok {
			xs, ys = append(xs, float64(run.Index+1)), append(ys, v)
		}
	}
	const w, h = 720.0, 220.0
	s := newSVG(w, h, "strip ab-runs", "runs of "+st.Metric+" in order")
	if len(xs) == 0 {
		s.text(w/2, h/2, "middle", "axis", "no run gave a value")
		return s.html()
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, v := range ys {
		ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
	}
	pad := (yhi - ylo) * 0.1
	f := newFrame(s, w, h, 0, float64(len(r.Runs)), ylo-pad, yhi+pad, func(v float64) string { return fmt.Sprintf("%g", v) },
		func(v float64) string { return ab.Format(v, st.Unit) }, "run (in the order they ran)", st.Metric)
	for arm, col := range []string{colorA, colorB} {
		if st.N[arm] > 0 && !math.IsNaN(st.Median[arm]) {
			y := f.y.at(st.Median[arm])
			s.line(marginLeft, y, w-marginRight, y, col, 1.5, true)
		}
	}
	for _, run := range r.Runs {
		v, ok := run.Metrics[st.Metric]
		if !ok {
			continue
		}
		col := colorA
		if run.Arm == r.B.Name {
			col = colorB
		}
		title := fmt.Sprintf("run %d, arm %s: %s", run.Index+1, run.Arm, ab.Format(v, st.Unit))
		x, y := f.x.at(float64(run.Index+1)), f.y.at(v)
		if run.OK() {
			s.circle(x, y, 5, col, "", title)
		} else {
			s.circle(x, y, 5, "#ffffff", colorGrey, title+" (not counted)")
		}
	}
	s.text(w-marginRight-60, 16, "end", "legend", "A")
	s.circle(w-marginRight-52, 12, 5, colorA, "", "")
	s.text(w-marginRight-8, 16, "end", "legend", "B")
	s.circle(w-marginRight, 12, 5, colorB, "", "")
	return s.html()
}

// forest draws each metric's comparison as an interval around no change:
// the ratio B/A - 1 in percent where the metric has one, otherwise the
// shift B - A in the metric's unit, each row on its own scale.
func forest(r *ab.Result) template.HTML {
	const w, rowH, labelW, textW = 720.0, 30.0, 170.0, 290.0
	h := rowH*float64(len(r.Stats)) + 30
	s := newSVG(w, h, "forest ab-verdict", "B against A per metric with confidence intervals")
	x0, x1 := labelW, w-textW
	s.text((x0+x1)/2, 14, "middle", "axis", "B vs A (0 = no change)")
	for i, st := range r.Stats {
		y := 30 + rowH*float64(i) + rowH/2
		s.text(labelW-8, y+4, "end", "tick", st.Metric)
		if st.Error != "" {
			s.text(x0, y+4, "start", "tick", "no statistics")
			continue
		}
		est, lo, hi := st.Shift.Estimate, st.Shift.Low, st.Shift.High
		format := func(v float64) string { return ab.Format(v, st.Unit) }
		if st.Ratio != nil {
			est, lo, hi = (st.Ratio.Estimate-1)*100, (st.Ratio.Low-1)*100, (st.Ratio.High-1)*100
			format = func(v float64) string { return fmt.Sprintf("%+.1f %%", v) }
		}
		span := math.Max(math.Max(math.Abs(lo), math.Abs(hi)), math.Abs(est)) * 1.15
		if span == 0 || math.IsNaN(span) {
			span = 1
		}
		ax := axis{-span, span, x0, x1}
		s.line(ax.at(0), y-rowH/2+3, ax.at(0), y+rowH/2-3, "#555555", 1, true)
		col := colorGrey
		switch st.Better {
		case "B":
			col = "#2e7d32"
		case "A":
			col = "#c62828"
		}
		tip := fmt.Sprintf("%s: %s (%s %s to %s)", st.Metric, format(est), st.Shift.CILabel(), format(lo), format(hi))
		s.rect(ax.at(lo), y-3, ax.at(hi)-ax.at(lo), 6, col, "", tip)
		s.circle(ax.at(est), y, 5, col, "#ffffff", tip)
		verdict := "no clear difference"
		if !st.Shift.Reached() {
			verdict = "no verdict: a " + stats.PctAchieved(st.Shift.Achieved) + " interval"
		}
		if st.Significant {
			verdict = map[string]string{"A": "B worse", "B": "B better"}[st.Better]
		}
		s.text(x1+8, y+4, "start", "value", fmt.Sprintf("%s [%s, %s] %s", format(est), format(lo), format(hi), verdict))
	}
	return s.html()
}
