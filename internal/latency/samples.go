package latency

import (
	"slices"
	"time"
)

// FromDurations summarises a few exact samples (tens, not millions: the
// round trips of one path-MTU search) without a histogram's rounding. The
// quantiles are nearest-rank: the smallest sample with at least q of the
// samples at or below it, so every quantile is a time that was measured.
// No samples give the zero Summary; ds is not modified.
func FromDurations(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	rank := func(q float64) int64 {
		// ceil(q*n) without float surprises for q*n integral: 0.9*10 is 9.
		i := int(q*float64(len(s))+1-1e-9) - 1
		return int64(s[min(max(i, 0), len(s)-1)])
	}
	return Summary{Count: int64(len(s)), Min: int64(s[0]), Mean: sum / float64(len(s)),
		P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), P999: rank(0.999), Max: int64(s[len(s)-1])}
}
