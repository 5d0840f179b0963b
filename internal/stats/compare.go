package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Comparison is what two samples of one metric say about each other: the
// location of each, how far B lies from A (as a shift and, for positive
// data, as a ratio), whether the difference is significant, and how much
// the runs could have detected given their noise.
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
	// Significant: the confidence interval of the shift excludes zero.
	Significant bool
	// Sigma is a robust estimate of the run-to-run noise (pooled MAD of
	// both arms, scaled to a normal standard deviation).
	Sigma float64
	// Detectable is the smallest shift (in the metric's unit) that the
	// runs had an 80 % chance to detect at the interval's level.
	Detectable float64
}

// Power settings for Detectable and RunsFor: a two-sided test at 5 % with
// 80 % power; the Mann-Whitney test needs 3/pi more runs than a t test on
// normal data (its asymptotic relative efficiency).
const (
	zPower = 0.8416212335729143 // standard normal quantile at 0.80
	areMW  = 3 / math.Pi
)

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
	c.Significant = c.Shift.Low > 0 || c.Shift.High < 0
	if la, lb, ok := logs(a), logs(b), positive(a) && positive(b); ok {
		r, err := HodgesLehmann(la, lb, conf)
		if err != nil {
			return c, err
		}
		c.Ratio = Shift{Estimate: math.Exp(r.Estimate), Low: math.Exp(r.Low), High: math.Exp(r.High),
			Level: r.Level, Achieved: r.Achieved, Exact: r.Exact}
	}
	c.Sigma = pooledSigma(a, b)
	n := float64(min(len(a), len(b)))
	c.Detectable = (z(conf) + zPower) * c.Sigma * math.Sqrt(2/(n*areMW))
	return c, nil
}

// RunsFor returns how many runs per arm would detect a shift of delta (in
// the metric's unit) with the noise c measured, at 80 % power; 0 when the
// noise is zero, +Inf when delta is zero.
func (c Comparison) RunsFor(delta float64, conf float64) int {
	if c.Sigma == 0 {
		return 0
	}
	if delta == 0 {
		return math.MaxInt
	}
	k := (z(conf) + zPower) * c.Sigma / math.Abs(delta)
	return int(math.Ceil(2 * k * k / areMW))
}

func z(conf float64) float64 { return stats.StdNormal.InvCDF(1 - (1-conf)/2) }

// pooledSigma is 1.4826 times the median of the absolute deviations of
// each value from its own arm's median: one robust noise figure for both.
func pooledSigma(a, b []float64) float64 {
	ma, mb := Median(a), Median(b)
	d := make([]float64, 0, len(a)+len(b))
	for _, x := range a {
		d = append(d, math.Abs(x-ma))
	}
	for _, x := range b {
		d = append(d, math.Abs(x-mb))
	}
	return 1.4826 * Median(d)
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
