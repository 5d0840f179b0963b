package ab

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/interlink/interlink/internal/stats"
)

// Expectation is an --expect: what the experiment should show for one
// metric, B against A, optionally by a factor: "blocks_per_sec: B > A",
// "rtt_p50: B < 0.9x A".
type Expectation struct {
	Text    string  `json:"text"`
	Metric  string  `json:"metric"`
	Greater bool    `json:"greater"`          // B > A; false: B < A
	Factor  float64 `json:"factor,omitempty"` // 0 or 1: a plain shift
}

var expectRE = regexp.MustCompile(`^\s*([A-Za-z0-9_.]+)\s*:\s*B\s*([<>])\s*(?:([0-9]*\.?[0-9]+)\s*x\s*)?A\s*$`)

// ParseExpect parses an --expect argument.
func ParseExpect(s string) (Expectation, error) {
	m := expectRE.FindStringSubmatch(s)
	if m == nil {
		return Expectation{}, fmt.Errorf("%w: --expect %q: want 'METRIC: B > A', 'METRIC: B < A' or with a factor 'METRIC: B > 1.2x A'", ErrSpec, s)
	}
	e := Expectation{Text: s, Metric: m[1], Greater: m[2] == ">"}
	if m[3] != "" {
		f, err := strconv.ParseFloat(m[3], 64)
		if err != nil || f <= 0 || f > 1e6 {
			return e, fmt.Errorf("%w: --expect %q: the factor must be a positive number", ErrSpec, s)
		}
		e.Factor = f
	}
	return e, nil
}

// Outcome of an expectation against the confidence interval.
type Outcome string

// Outcomes: Holds when the whole interval lies on the expected side,
// Contradicted when it lies wholly on the other, Inconclusive otherwise,
// and always when the interval did not reach the confidence asked for
// (too few runs).
const (
	Holds        Outcome = "holds"
	Contradicted Outcome = "contradicted"
	Inconclusive Outcome = "inconclusive"
)

// ExpectResult is an expectation with its outcome.
type ExpectResult struct {
	Expectation
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
}

func (e Expectation) judge(ms *MetricStats) ExpectResult {
	r := ExpectResult{Expectation: e}
	if ms == nil || ms.Error != "" {
		r.Outcome, r.Reason = Inconclusive, "no statistics for "+e.Metric
		if ms != nil {
			r.Reason += ": " + ms.Error
		}
		return r
	}
	lo, hi, ref := ms.Shift.Low, ms.Shift.High, 0.0
	if e.Factor != 0 && e.Factor != 1 {
		if ms.Ratio == nil {
			r.Outcome, r.Reason = Inconclusive, "a factor needs positive values in both arms"
			return r
		}
		lo, hi, ref = ms.Ratio.Low, ms.Ratio.High, e.Factor
	}
	above, below := lo > ref, hi < ref
	switch {
	case !ms.Shift.Reached():
		r.Outcome = Inconclusive
		r.Reason = stats.TooFew("runs", ms.Confidence) + "; " + spans(stats.PctAchieved(ms.Shift.Achieved), lo, hi, ref, ms.Unit)
	case e.Greater && above, !e.Greater && below:
		r.Outcome = Holds
	case e.Greater && hi <= ref, !e.Greater && lo >= ref:
		r.Outcome = Contradicted
	default:
		r.Outcome = Inconclusive
		r.Reason = spans(stats.Pct(ms.Confidence), lo, hi, ref, ms.Unit)
	}
	return r
}

// spans says where an inconclusive interval of level lies: of B / A
// against a factor ref, else of B - A.
func spans(level string, lo, hi, ref float64, u Unit) string {
	of := "- A"
	if ref != 0 {
		of = "/ A"
	}
	return fmt.Sprintf("the %s interval of B %s spans %s", level, of, fmtRange(lo, hi, ref != 0, u))
}

func fmtRange(lo, hi float64, ratio bool, u Unit) string {
	if ratio {
		return fmt.Sprintf("%.3gx to %.3gx", lo, hi)
	}
	return signed(lo, u) + " to " + signed(hi, u)
}

// signed formats a shift in the metric's unit with its sign.
func signed(v float64, u Unit) string {
	if v < 0 {
		return "-" + Format(-v, u)
	}
	return "+" + Format(v, u)
}
