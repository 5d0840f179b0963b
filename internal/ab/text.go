package ab

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/stats"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// Format renders v in the unit's habit: rates as Gbit/s, times in us or
// ms, per-second counts whole.
func Format(v float64, u Unit) string {
	switch u {
	case UnitBitRate:
		return units.FormatRate(v)
	case UnitNs:
		switch a := math.Abs(v); {
		case a >= 1e9:
			return fmt.Sprintf("%.2f s", v/1e9)
		case a >= 1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		default:
			return fmt.Sprintf("%.1f us", v/1e3)
		}
	case UnitPerSec:
		return fmt.Sprintf("%.0f/s", v)
	case UnitPercent:
		return fmt.Sprintf("%.2f %%", v)
	case UnitCount:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.4g", v)
	}
}

// WriteText renders r for a terminal.
func WriteText(out io.Writer, r *Result) error {
	w := textout.New(out)
	made := 0
	for _, run := range r.Runs {
		if run.OK() {
			made++
		}
	}
	fmt.Fprintf(w, "interlink ab: %d runs per arm after %d warm-up, %s order, %s confidence (%d measured runs)\n",
		r.RunsPerArm, r.Warmup, strings.ToUpper(string(r.Order)), stats.Pct(r.Confidence), made)
	for _, a := range []Arm{r.A, r.B} {
		fmt.Fprintf(w, "  %s: %s", a.Name, termtext.Clean(a.CommandLine()))
		if a.Prepare != "" {
			fmt.Fprintf(w, "  (prepare: %s)", termtext.Clean(a.Prepare))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tA median\tB median\tB/A\t%s CI of B/A\tp\t\n", stats.Pct(r.Confidence))
	for _, s := range r.Stats {
		if s.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t\n", s.Metric)
			continue
		}
		ratio, ci := "-", "-"
		if s.Ratio != nil {
			ratio = fmt.Sprintf("%.3fx", s.Ratio.Estimate)
			ci = fmt.Sprintf("%.3f..%.3f", s.Ratio.Low, s.Ratio.High) + s.Ratio.LevelNote()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3g\t\n", s.Metric, Format(s.Median[0], s.Unit), Format(s.Median[1], s.Unit), ratio, ci, s.P)
	}
	tw.Flush()
	fmt.Fprintln(w)
	writeJudged(w, r)
	for _, e := range r.Expect {
		fmt.Fprintf(w, "expect %s: %s", termtext.Clean(e.Text), e.Outcome)
		if e.Reason != "" {
			fmt.Fprintf(w, " (%s)", e.Reason)
		}
		fmt.Fprintln(w)
	}
	for _, l := range r.LimitedBy {
		fmt.Fprintf(w, "WARNING: cut short by %s\n", l)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "WARNING: interrupted: the statistics cover the runs made before Ctrl-C")
	}
	failed := 0
	for _, run := range r.Runs {
		if run.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "WARNING: %d run(s) failed and are left out (see --json for each error)\n", failed)
	}
	return w.Err()
}

// writeJudged writes each metric's verdict: the primary metrics first,
// then the secondary ones under the correction they were judged with. A
// document from before metrics had roles lists them in order.
func writeJudged(w io.Writer, r *Result) {
	if len(r.Primary) == 0 {
		for _, s := range r.Stats {
			writeMetric(w, r, s)
		}
		return
	}
	why := "no --expect: the first metric"
	if r.PrimaryFrom == "expect" {
		why = "named by --expect"
	}
	noun, each := "primary metric", ""
	if len(r.Primary) > 1 {
		noun, each = "primary metrics", "each "
	}
	fmt.Fprintf(w, "%s (%s), %sjudged at %s:\n", noun, why, each, stats.Pct(r.Confidence))
	for _, s := range r.Stats {
		if s.Primary {
			writeMetric(w, r, s)
		}
	}
	if r.Wakes != nil && r.Wakes.Note != "" {
		fmt.Fprintf(w, "  NOTE: %s\n", r.Wakes.Note)
	}
	if len(r.Stats) == len(r.Primary) {
		return
	}
	alpha := 1 - r.Confidence
	fmt.Fprintf(w, "secondary metrics: Holm-corrected across %d (a difference needs a Holm-adjusted p of at most %.3g, which keeps the chance of any false one among them at most %.3g %%):\n",
		r.HolmFamily, alpha, alpha*100)
	for _, s := range r.Stats {
		if !s.Primary {
			writeMetric(w, r, s)
		}
	}
}

func writeMetric(w io.Writer, r *Result, s MetricStats) {
	dir := "higher is better"
	if s.LowerBetter {
		dir = "lower is better"
	}
	fmt.Fprintf(w, "  %s (%s): %s\n", s.Metric, dir, s.Summary)
	for arm, rho := range s.Drift {
		if rho != nil {
			trend := "rose"
			if *rho < 0 {
				trend = "fell"
			}
			fmt.Fprintf(w, "    drift: arm %s %s over its runs (Spearman rho %+.2f): the system changed during the experiment; rerun or use --order random\n",
				[2]string{r.A.Name, r.B.Name}[arm], trend, *rho)
		}
	}
	if len(s.Outliers) > 0 {
		fmt.Fprintf(w, "    outliers: run(s) %s lie far from their arm's median (modified z-score above 3.5)\n", runList(s.Outliers))
	}
}

func runList(idx []int) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = fmt.Sprint(x + 1)
	}
	return strings.Join(parts, ", ")
}
