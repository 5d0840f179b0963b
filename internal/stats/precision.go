package stats

import "math"

// Precision is how narrow a comparison's interval is, and how many runs
// would narrow it to a target. It is read off the Hodges-Lehmann interval
// itself (no second noise estimate), so a reader can check it against the
// printed interval: the interval's width shrinks as sqrt(1/m + 1/n) with m
// and n runs per arm (asymptotically 2 z sqrt((m+n+1)/(12 m n)) over the
// density's integral of f squared), so with N runs per arm now, about
// N (HalfWidthPct / target)^2 runs per arm give a half-width of target.
// The ratio interval shrinks symmetrically on a log scale, so for an
// interval far wider than +-10 % this undercounts (at 0.38..1.19, +-40 %
// printed but +-57 % on the log scale, by about half); it is exact enough
// to show that such noise needs a cause rather than runs.
type Precision struct {
	// HalfWidth is half the width of the shift interval, (High - Low) / 2,
	// in the metric's unit: B's estimate must lie about this far from A's
	// before the interval leaves zero, so it is the smallest shift these
	// runs can show.
	HalfWidth float64
	// HalfWidthPct is the half-width in percent of A: half the width of
	// the ratio interval, (High - Low) / 2 * 100, where the values are
	// positive, else HalfWidth over |median of A| * 100. NaN when neither
	// exists (A's median is zero and a value is not positive).
	HalfWidthPct float64
	// N is the runs per arm the interval came from: the harmonic mean
	// 2mn/(m+n) of the two arms' counts (their common count when equal).
	N float64
}

func precisionOf(c Comparison, m, n int) Precision {
	p := Precision{HalfWidth: (c.Shift.High - c.Shift.Low) / 2, HalfWidthPct: math.NaN(),
		N: 2 * float64(m) * float64(n) / float64(m+n)}
	switch a := math.Abs(c.MedianA); {
	case c.Ratio.Level != 0:
		p.HalfWidthPct = (c.Ratio.High - c.Ratio.Low) / 2 * 100
	case a > 0:
		p.HalfWidthPct = p.HalfWidth / a * 100
	}
	return p
}

// RunsFor returns the runs per arm that would narrow the interval to a
// half-width of targetPct percent of A: ceil(N (HalfWidthPct /
// targetPct)^2). It is 0 when the interval has no width (every run gave
// the same value) or no percentage, at most N when the interval is already
// that narrow, and math.MaxInt for a target of zero.
func (p Precision) RunsFor(targetPct float64) int {
	switch {
	case math.IsNaN(p.HalfWidthPct) || p.HalfWidthPct == 0:
		return 0
	case !(targetPct > 0):
		return math.MaxInt
	}
	k := p.HalfWidthPct / targetPct
	runs := math.Ceil(p.N * k * k)
	if runs >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(runs)
}
