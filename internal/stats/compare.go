package stats

import (
	"math"
)

// Comparison is what two samples of one metric say about each other: the
// location of each, how far B lies from A (as a shift and, for positive
// data, as a ratio), whether the difference is significant, and how
// precise the interval is. Every figure but the p-value comes from one
// estimator, the Hodges-Lehmann shift with its Mann-Whitney interval: the
// precision and the runs it advises are read off that interval, so they
// cannot contradict it.
type Comparison struct {
	MedianA, MedianB float64
	// Shift is the Hodges-Lehmann shift B - A in the metric's unit.
	Shift Shift
	// Ratio is the Hodges-Lehmann shift of log B against log A, taken back
	// to a factor: B is Ratio.Estimate times A. Zero when a value is not
	// positive (a ratio means nothing there).
	Ratio Shift
	// P is the two-sided Mann-Whitney p-value.
	P float64
	// Significant: the confidence interval of the shift reached the level
	// asked for (Shift.Reached) and excludes zero. An interval that did
	// not reach it is no evidence at that level, however far from zero.
	Significant bool
	// Precision is the interval's half-width and what it implies for more
	// runs.
	Precision Precision
}

// Compare compares sample b against sample a at confidence level conf.
func Compare(a, b []float64, conf float64) (Comparison, error) {
	c := Comparison{MedianA: Median(a), MedianB: Median(b)}
	var err error
	if c.Shift, err = HodgesLehmann(a, b, conf); err != nil {
		return c, err
	}
	if c.P, err = MannWhitney(a, b); err != nil {
		return c, err
	}
	c.Significant = c.Shift.Reached() && (c.Shift.Low > 0 || c.Shift.High < 0)
	if la, lb, ok := logs(a), logs(b), positive(a) && positive(b); ok {
		r, err := HodgesLehmann(la, lb, conf)
		if err != nil {
			return c, err
		}
		c.Ratio = Shift{Estimate: math.Exp(r.Estimate), Low: math.Exp(r.Low), High: math.Exp(r.High),
			Level: r.Level, Achieved: r.Achieved, Exact: r.Exact}
	}
	c.Precision = precisionOf(c, len(a), len(b))
	return c, nil
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return false
		}
	}
	return len(xs) > 0
}

func logs(xs []float64) []float64 {
	l := make([]float64, len(xs))
	for i, x := range xs {
		l[i] = math.Log(x)
	}
	return l
}
