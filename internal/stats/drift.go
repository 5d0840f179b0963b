package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Trend is a monotonic trend of a sample over the order it was taken in:
// Spearman's rank correlation between run order and value, with its
// two-sided p-value: exact (every permutation, as R's cor.test(method =
// "spearman") for n <= 9 without ties), else the t approximation (R's
// exact = FALSE). A significant trend within one arm of an
// experiment means the system drifted (warming caches, a neighbour's load,
// thermal throttling), and the arms' difference may be the drift's.
type Trend struct {
	Rho float64 // -1 (falling) .. +1 (rising)
	P   float64 // NaN when fewer than 3 values or all values are equal
}

// Drift returns the trend of xs, taken in the order given.
func Drift(xs []float64) Trend {
	n := len(xs)
	if n < 3 {
		return Trend{Rho: math.NaN(), P: math.NaN()}
	}
	order := make([]float64, n)
	for i := range order {
		order[i] = float64(i)
	}
	rx, _ := ranks(order)
	ry, ties := ranks(xs)
	rho := pearson(rx, ry)
	if math.IsNaN(rho) {
		return Trend{Rho: rho, P: math.NaN()}
	}
	if n <= 9 && !ties {
		return Trend{Rho: rho, P: spearmanExact(ry, rho)}
	}
	if math.Abs(rho) >= 1 {
		return Trend{Rho: rho, P: 0}
	}
	df := float64(n - 2)
	t := rho * math.Sqrt(df/(1-rho*rho))
	td := stats.TDist{V: df}
	return Trend{Rho: rho, P: 2 * (1 - td.CDF(math.Abs(t)))}
}

// spearmanExact is the two-sided permutation p-value of Spearman's rho for
// the ranks ry against 1..n: twice the share of the n! orderings whose
// sum of squared rank differences is at least as extreme, at most 1.
func spearmanExact(ry []float64, rho float64) float64 {
	n := len(ry)
	dObs := 0.0
	for i, r := range ry {
		d := float64(i+1) - r
		dObs += d * d
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i + 1
	}
	var tail, total float64
	count := func() {
		d := 0
		for i, p := range perm {
			d += (i + 1 - p) * (i + 1 - p)
		}
		total++
		if (rho >= 0 && float64(d) <= dObs+1e-9) || (rho < 0 && float64(d) >= dObs-1e-9) {
			tail++
		}
	}
	// Heap's algorithm, iterative.
	c := make([]int, n)
	count()
	for i := 0; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				perm[0], perm[i] = perm[i], perm[0]
			} else {
				perm[c[i]], perm[i] = perm[i], perm[c[i]]
			}
			count()
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
	return math.Min(1, 2*tail/total)
}

func pearson(x, y []float64) float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// OutlierZ is the modified z-score above which a value is an outlier
// (Iglewicz and Hoaglin, "How to Detect and Handle Outliers", 1993).
const OutlierZ = 3.5

// Outliers returns the indexes of the values of xs whose modified z-score,
// 0.6745 |x - median| / MAD, exceeds OutlierZ. With a MAD of zero (more
// than half the values equal) any value off the median is an outlier.
func Outliers(xs []float64) []int {
	if len(xs) < 3 {
		return nil
	}
	m, mad := Median(xs), MAD(xs)
	var out []int
	for i, x := range xs {
		d := math.Abs(x - m)
		if (mad == 0 && d > 0) || (mad > 0 && 0.6745*d/mad > OutlierZ) {
			out = append(out, i)
		}
	}
	return out
}
