package stats

import (
	"errors"
	"math"
	"sort"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// ErrSample is returned when a sample is too small for the statistic.
var ErrSample = errors.New("stats: each sample needs at least two values")

// Shift is the Hodges-Lehmann estimate of how far sample B lies from
// sample A (the median of all differences b - a) with its confidence
// interval, as R's wilcox.test(b, a, conf.int = TRUE) computes it.
type Shift struct {
	Estimate float64 `json:"estimate"` // median of the pairwise differences b - a
	Low      float64 `json:"low"`      // lower bound of the confidence interval
	High     float64 `json:"high"`     // upper bound of the confidence interval
	Level    float64 `json:"level"`    // the confidence level asked for, e.g. 0.95
	// Achieved is the level the order statistics really give: at least
	// Level when the samples are large enough, else less (see Reached),
	// and then the interval is the widest these samples give.
	Achieved float64 `json:"achieved"`
	Exact    bool    `json:"exact"` // the interval comes from the exact U distribution (no ties, n <= 50)
}

// HodgesLehmann returns the shift of b against a and its confidence
// interval at level conf (0.95 for 95 %). The interval is exact (order
// statistics of the pairwise differences at the quantiles of the
// Mann-Whitney U distribution) when neither sample exceeds 50 values and
// no two values in the pooled samples are equal; otherwise it uses the
// normal approximation of U.
func HodgesLehmann(a, b []float64, conf float64) (Shift, error) {
	m, n := len(b), len(a)
	if m < 2 || n < 2 {
		return Shift{}, ErrSample
	}
	diffs := make([]float64, 0, m*n)
	for _, y := range b {
		for _, x := range a {
			diffs = append(diffs, y-x)
		}
	}
	sort.Float64s(diffs)
	s := Shift{Estimate: Median(diffs), Level: conf}
	alpha := 1 - conf
	_, ties := ranks(append(append([]float64(nil), a...), b...))
	var qu int
	if !ties && m <= 50 && n <= 50 {
		cdf := cachedUCDF(m, n)
		// qwilcox(alpha/2): the smallest q with P(U <= q) >= alpha/2.
		for qu = 0; qu < len(cdf) && cdf[qu] < alpha/2; qu++ {
		}
		if qu == 0 {
			qu = 1
		}
		s.Exact = true
		s.Achieved = 1 - 2*cdf[qu-1]
	} else {
		z := stats.StdNormal.InvCDF(1 - alpha/2)
		mn := float64(m * n)
		sd := math.Sqrt(mn * float64(m+n+1) / 12)
		k := math.Floor(mn/2 - z*sd)
		qu = max(int(k), 1)
		s.Achieved = conf
		if k < 1 {
			// Too few values for the level: the widest interval is all
			// these samples give. It misses only when the samples lie
			// wholly apart, which ties make rarer, so the exact level
			// without ties is a floor where it is computed; else the
			// normal approximation's for qu = 1.
			s.Achieved = 2*stats.StdNormal.CDF((mn/2-1)/sd) - 1
			if m <= 50 && n <= 50 {
				s.Achieved = 1 - 2*cachedUCDF(m, n)[0]
			}
		}
	}
	ql := m*n - qu
	s.Low, s.High = diffs[qu-1], diffs[ql]
	return s, nil
}

// uCDFCache holds uCDF's tables by sample sizes: building one for 50 and
// 50 values is 25 million additions, and ab, the precision advice and
// their tests ask for the same few sizes again and again. At most
// uCDFCacheMax tables (m*n+1 values each, 20 KiB at most) are kept.
var uCDFCache struct {
	sync.Mutex
	m map[[2]int][]float64
}

const uCDFCacheMax = 128

// cachedUCDF is uCDF(m, n), shared: callers must not modify it.
func cachedUCDF(m, n int) []float64 {
	k := [2]int{m, n}
	uCDFCache.Lock()
	c, ok := uCDFCache.m[k]
	uCDFCache.Unlock()
	if ok {
		return c
	}
	c = uCDF(m, n)
	uCDFCache.Lock()
	defer uCDFCache.Unlock()
	if uCDFCache.m == nil {
		uCDFCache.m = map[[2]int][]float64{}
	}
	if len(uCDFCache.m) < uCDFCacheMax {
		uCDFCache.m[k] = c
	}
	return c
}

// uCDF returns P(U <= u) for u = 0..m*n, where U counts the pairs (b, a)
// with b > a, for samples of m and n values drawn from one continuous
// distribution. U is the rank sum of the m values less m(m+1)/2, so its
// distribution is that of the sum of a random m-subset of 1..m+n, counted
// by a subset-sum table (additions only: no cancellation).
func uCDF(m, n int) []float64 {
	maxSum := m * (m + n)
	ways := make([][]float64, m+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for i := 1; i <= m+n; i++ {
		for j := min(i, m); j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := maxSum; s >= i; s-- {
				cur[s] += prev[s-i]
			}
		}
	}
	base := m * (m + 1) / 2
	cdf := make([]float64, m*n+1)
	total, acc := 0.0, 0.0
	for u := range cdf {
		total += ways[m][u+base]
	}
	for u := range cdf {
		acc += ways[m][u+base]
		cdf[u] = acc / total
	}
	return cdf
}

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test
// (Wilcoxon rank-sum) of a against b: exact for small samples (also with
// ties), the normal approximation with tie and continuity correction for
// large ones. Samples whose values are all equal give p = 1.
func MannWhitney(a, b []float64) (float64, error) {
	if len(a) < 2 || len(b) < 2 {
		return math.NaN(), ErrSample
	}
	r, err := stats.MannWhitneyUTest(b, a, stats.LocationDiffers)
	if errors.Is(err, stats.ErrSamplesEqual) {
		return 1, nil
	}
	if err != nil {
		return math.NaN(), err
	}
	return r.P, nil
}
