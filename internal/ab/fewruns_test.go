package ab

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/stats"
)

// TestAAFewRuns simulates 2000 A/A experiments per kind of noise with 2,
// 3 and 4 runs per arm, each with one primary and six secondary metrics,
// judged as finish judges them. Two and three runs per arm cannot give a
// 95 % interval (66.7 % and 90 % at most): no metric may then be called
// better or worse, and every summary must say so and name the runs that
// would, while the intervals themselves exclude 0 in far more experiments
// than a 95 % rule allows (which the test checks, so that it fails if
// verdicts were read off them, as before). Four runs per arm reach 97.1 %:
// the primary's false verdicts and the family's with Holm stay within
// 5 % up to the binomial allowance a correct method exceeds at most once
// in a thousand seeds.
func TestAAFewRuns(t *testing.T) {
	const experiments, metrics, conf = 2000, 7, 0.95
	limit := stats.BinomialLimit(experiments, 1-conf, 1e-3)
	for k, d := range draws {
		for _, runs := range []int{2, 3, 4} {
			rng := rand.New(rand.NewPCG(34, uint64(10*k+runs)))
			var primary, family, rawPrimary int
			for range experiments {
				all := simulate(rng, d.draw, metrics, runs, conf)
				if all[0].Shift.Low > 0 || all[0].Shift.High < 0 {
					rawPrimary++
				}
				if all[0].Significant {
					primary++
				}
				any := false
				for _, st := range all {
					if st.Significant && st.Shift.Achieved < conf {
						t.Fatalf("%s, %d runs: a verdict from a %.3g interval: %q", d.name, runs, st.Shift.Achieved, st.Summary)
					}
					if runs < 4 && !sameEverywhere(st) && !strings.HasPrefix(st.Summary, "no verdict: too few runs for 95 % (need 4 a side); ") {
						t.Fatalf("%s, %d runs: summary %q", d.name, runs, st.Summary)
					}
					any = any || (!st.Primary && st.Significant)
				}
				if any {
					family++
				}
			}
			t.Logf("%s, %d runs per arm: the primary's interval excludes 0 in %d of %d, verdicts %d; a secondary verdict in %d (limit %d)",
				d.name, runs, rawPrimary, experiments, primary, family, limit)
			switch {
			case runs < 4 && (primary != 0 || family != 0):
				t.Errorf("%s, %d runs: %d primary and %d secondary verdicts, want none", d.name, runs, primary, family)
			case runs == 2 && rawPrimary <= limit:
				t.Errorf("%s, 2 runs: the 66.7 %% interval excluded 0 only %d times: the simulation cannot show the rule", d.name, rawPrimary)
			case runs == 4 && (primary > limit || family > limit):
				t.Errorf("%s, 4 runs: %d primary and %d family false verdicts of %d, above %d", d.name, primary, family, experiments, limit)
			}
		}
	}
}

// sameEverywhere: every run of both arms gave one value, which the
// summary says instead.
func sameEverywhere(st MetricStats) bool {
	return st.Min == st.Max && st.Min[0] == st.Min[1]
}

// TestTooFewRunsSummary: two runs per arm of arms 30 % apart, the case of
// issue 34 (--runs 2, sleep 0.01 against sleep 0.013): the interval is a
// 66.7 % one, and neither the summary nor the expectation claims 95 %.
func TestTooFewRunsSummary(t *testing.T) {
	r := fakeResult([]float64{10.6e6, 10.9e6}, []float64{13.4e6, 13.7e6}, true, "m: B < A")
	st := r.Stats[0]
	if st.Significant || st.Better != "" || st.Advice != nil || st.Shift.Reached() {
		t.Errorf("significant %v better %q advice %v reached %v", st.Significant, st.Better, st.Advice, st.Shift.Reached())
	}
	want := "no verdict: too few runs for 95 % (need 4 a side); B is 1.26x A (66.6 % CI 1.23 to 1.29)"
	if st.Summary != want {
		t.Errorf("summary\n%q, want\n%q", st.Summary, want)
	}
	e := r.Expect[0]
	if e.Outcome != Inconclusive || r.Verdict != VerdictWarning || !strings.HasPrefix(e.Reason, "too few runs for 95 % (need 4 a side); the 66.6 % interval of B - A spans ") {
		t.Errorf("expectation %s (%s), verdict %s", e.Outcome, e.Reason, r.Verdict)
	}
	var text strings.Builder
	WriteText(&text, r)
	if out := text.String(); strings.Contains(out, "95 % CI 1.") || !strings.Contains(out, "1.229..1.292 (66.6 %)") || strings.Contains(out, ": worse") {
		t.Errorf("text:\n%s", out)
	}
}
