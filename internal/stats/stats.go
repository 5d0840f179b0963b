// Package stats holds the statistics interlink uses to compare samples of
// repeated measurements: medians and robust spread, the Hodges-Lehmann
// shift with its exact or approximate confidence interval, the
// Mann-Whitney U test, drift over run order and outliers.
//
// Everything is non-parametric: run-to-run figures from a shared machine
// are skewed and carry outliers, and operators compare medians. All
// functions take samples as given and never modify them; a sample of
// length zero yields NaN (or an error where one is returned).
//
// A verdict rests only on an interval that has the confidence it claims
// (Shift.Reached): few runs cannot give one (two a side give 66.7 % at
// most), and such an interval is labelled with its own level (CILabel)
// and the runs that would reach the level (TooFew, MinRunsPerSide).
// Several metrics judged at once are Holm-corrected (Holm).
package stats

import (
	"math"
	"sort"
)

// Median returns the median of xs (the mean of the two middle values for
// an even length), NaN for an empty sample.
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Quantile returns the q-quantile of xs (0 <= q <= 1) with linear
// interpolation between order statistics (R's default type 7), NaN for an
// empty sample.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := sorted(xs)
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// MAD returns the median absolute deviation of xs from its median,
// unscaled; multiply by 1.4826 for a consistent estimate of a normal
// standard deviation.
func MAD(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := Median(xs)
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return Median(d)
}

// Min and Max return the extremes of xs, NaN for an empty sample.
func Min(xs []float64) float64 { return extreme(xs, math.Min) }

// Max is the counterpart of Min.
func Max(xs []float64) float64 { return extreme(xs, math.Max) }

func extreme(xs []float64, f func(a, b float64) float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := xs[0]
	for _, x := range xs[1:] {
		m = f(m, x)
	}
	return m
}

func sorted(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}

// ranks returns the rank of each value of xs (1-based, ties given the mean
// of the ranks they span) and whether any ties occurred.
func ranks(xs []float64) ([]float64, bool) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	ties := false
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		if j > i {
			ties = true
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
		}
		i = j + 1
	}
	return r, ties
}
