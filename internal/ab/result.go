package ab

import (
	"slices"

	"github.com/interlink/interlink/internal/stats"
)

// Schema is the JSON schema name of a Result.
const Schema = "interlink.ab/v1"

// Verdict is the experiment's outcome, mapped to an exit code by the CLI.
type Verdict string

// Verdicts: OK (every expectation holds, or none was given and the
// experiment ran whole), Warning (an expectation is inconclusive, or a
// limit or Ctrl-C cut the experiment short), Critical (an expectation is
// contradicted), Unknown (no statistics could be made).
const (
	VerdictOK       Verdict = "ok"
	VerdictWarning  Verdict = "warning"
	VerdictCritical Verdict = "critical"
	VerdictUnknown  Verdict = "unknown"
)

// Result is an experiment: its design, every run in order and the
// statistics per metric.
type Result struct {
	Schema     string   `json:"schema"`
	A          Arm      `json:"a"`
	B          Arm      `json:"b"`
	Order      Order    `json:"order"`
	Seed       int64    `json:"seed,omitempty"`
	RunsPerArm int      `json:"runs_per_arm"`
	Warmup     int      `json:"warmup_per_arm"`
	Confidence float64  `json:"confidence"`
	Metrics    []Metric `json:"metrics"`
	// Primary names the metrics that are the experiment's question, each
	// judged at Confidence: those an --expect names, else the first metric
	// (the first --metric, or the first of the mode's defaults);
	// PrimaryFrom says which rule chose them ("expect" or "first metric").
	// The other metrics are secondary: a secondary metric differs only
	// when its Holm-adjusted p-value across the HolmFamily secondary
	// metrics with statistics is at most 1 - Confidence. All three are
	// absent in documents written before they existed.
	Primary     []string       `json:"primary_metrics,omitempty"`
	PrimaryFrom string         `json:"primary_from,omitempty"`
	HolmFamily  int            `json:"holm_family,omitempty"`
	Runs        []Run          `json:"runs"`
	Stats       []MetricStats  `json:"statistics"`
	Expect      []ExpectResult `json:"expectations,omitempty"`
	LimitedBy   []string       `json:"limited_by,omitempty"`
	Interrupted bool           `json:"interrupted,omitempty"`
	// Wakes says how much of each arm's round trip was the hosts waking
	// up (bench blocks runs), and notes it when that hides the network.
	Wakes   *Wakes  `json:"wake_ups,omitempty"`
	Verdict Verdict `json:"verdict"`
	expect  []Expectation
}

// MetricStats is one metric's comparison of B against A.
type MetricStats struct {
	Metric      string     `json:"metric"`
	Unit        Unit       `json:"unit,omitempty"`
	LowerBetter bool       `json:"lower_is_better"`
	Confidence  float64    `json:"confidence"`
	N           [2]int     `json:"n"`
	Median      [2]float64 `json:"median"`
	Min         [2]float64 `json:"min"`
	Max         [2]float64 `json:"max"`
	// Primary: the metric is the experiment's question (Result.Primary).
	Primary bool `json:"primary"`
	// Shift is B - A (Hodges-Lehmann) with its interval; Ratio is B/A with
	// its interval, absent when a value is not positive.
	Shift stats.Shift  `json:"shift"`
	Ratio *stats.Shift `json:"ratio,omitempty"`
	// P is the Mann-Whitney p-value; PHolm, for a secondary metric, the
	// same Holm-adjusted across the secondary metrics.
	P     float64 `json:"p_value"`
	PHolm float64 `json:"p_holm,omitempty"`
	// Significant: the interval reached Confidence (Shift.Reached) and
	// excludes zero and, for a secondary metric, PHolm is at most 1 -
	// Confidence.
	Significant bool `json:"significant"`
	// Better is "A" or "B" when the difference is significant.
	Better string `json:"better,omitempty"`
	// Detectable is half the width of the shift interval, in the metric's
	// unit: the smallest shift these runs can tell from none (at the level
	// the interval has: see Shift.Achieved). RunsFor1Pct
	// is Advice.RunsPerArm: the runs per arm that would narrow the
	// interval to +-1 % of A.
	Detectable  float64 `json:"detectable_shift"`
	RunsFor1Pct int     `json:"runs_for_1pct,omitempty"`
	Advice      *Advice `json:"advice,omitempty"`
	// Drift is Spearman's rho of each arm's values against run order,
	// where significant at 5 %; Outliers are run indexes.
	Drift    [2]*float64 `json:"drift_rho"`
	Outliers []int       `json:"outliers,omitempty"`
	Summary  string      `json:"summary"`
	Error    string      `json:"error,omitempty"`
}

func newResult(s Spec) *Result {
	return &Result{Schema: Schema, A: s.A, B: s.B, Order: s.Order, Seed: s.Seed, RunsPerArm: s.Runs,
		Warmup: s.Warmup, Confidence: s.Confidence, Metrics: s.Metrics, expect: s.Expect}
}

// finish computes the statistics, judges the primary metrics at the
// nominal level and the secondary ones with Holm's correction, and derives
// the expectations and the verdict, which rest on the primary metrics.
func (r *Result) finish() {
	r.Stats = r.Stats[:0]
	for _, m := range r.Metrics {
		r.Stats = append(r.Stats, r.analyze(m))
	}
	r.Primary, r.PrimaryFrom = primaryMetrics(r.Metrics, r.expect)
	for i := range r.Stats {
		r.Stats[i].Primary = slices.Contains(r.Primary, r.Stats[i].Metric)
	}
	r.HolmFamily = judgeMetrics(r.Stats, r.Confidence)
	r.Wakes = r.wakes()
	r.Verdict = VerdictOK
	if r.Interrupted || len(r.LimitedBy) > 0 {
		r.Verdict = VerdictWarning
	}
	if len(r.Stats) == 0 {
		r.Verdict = VerdictUnknown
	}
	for _, st := range r.Stats {
		if st.Error != "" && st.Primary {
			r.Verdict = VerdictUnknown
		}
	}
	r.Expect = r.Expect[:0]
	for _, e := range r.expect {
		var ms *MetricStats
		for i := range r.Stats {
			if r.Stats[i].Metric == e.Metric {
				ms = &r.Stats[i]
			}
		}
		er := e.judge(ms)
		r.Expect = append(r.Expect, er)
		switch {
		case er.Outcome == Contradicted:
			r.Verdict = VerdictCritical
		case er.Outcome == Inconclusive && r.Verdict == VerdictOK:
			r.Verdict = VerdictWarning
		}
	}
}

// Values returns metric's values for arm (0 for A, 1 for B) from the runs
// that count, in run order, with their run indexes.
func (r *Result) Values(metric string, arm int) (vals []float64, idx []int) {
	name := [2]string{r.A.Name, r.B.Name}[arm]
	for _, run := range r.Runs {
		if v, ok := run.Metrics[metric]; ok && run.OK() && run.Arm == name {
			vals = append(vals, v)
			idx = append(idx, run.Index)
		}
	}
	return vals, idx
}

func (r *Result) analyze(m Metric) MetricStats {
	ms := MetricStats{Metric: m.Name, Unit: m.Unit, LowerBetter: m.LowerBetter, Confidence: r.Confidence}
	var vals [2][]float64
	for arm := range 2 {
		v, idx := r.Values(m.Name, arm)
		vals[arm] = v
		ms.N[arm] = len(v)
		if len(v) == 0 {
			continue
		}
		ms.Median[arm], ms.Min[arm], ms.Max[arm] = stats.Median(v), stats.Min(v), stats.Max(v)
		if d := stats.Drift(v); d.P < 0.05 {
			rho := d.Rho
			ms.Drift[arm] = &rho
		}
		for _, o := range stats.Outliers(v) {
			ms.Outliers = append(ms.Outliers, idx[o])
		}
		slices.Sort(ms.Outliers)
	}
	compareArms(&ms, vals[0], vals[1])
	return ms
}
