package stats

import (
	"math"
	"slices"
	"testing"
)

// Reference values below come from R 4.2.2 (Debian r-base-core), not from
// this package: wilcox.test(B, A, conf.int = TRUE) for the shift, its
// interval and p-value; wilcox.test(log(B), log(A), conf.int = TRUE) taken
// back with exp() for the ratio; cor.test(seq_along(x), x, method =
// "spearman") for the trend; quantile() and mad(constant=1).

var (
	blocks1500 = []float64{18902, 19410, 18655, 19120, 18777, 19305}
	blocks9000 = []float64{26002, 25410, 26630, 25120, 26777, 25905}
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g (R)", name, got, want)
	}
}

func TestHodgesLehmannAgainstR(t *testing.T) {
	for _, tc := range []struct {
		name                string
		a, b                []float64
		conf                float64
		est, lo, hi, pvalue float64
	}{
		{"jumbo blocks/s", blocks1500, blocks9000, 0.95, 6942.5, 6218, 7728, 2.16450216450216e-03},
		{"no difference", []float64{10.1, 9.8, 10.4, 10.0, 9.7, 10.3}, []float64{10.2, 9.9, 10.05, 10.35, 9.75, 10.15},
			0.95, 0.05, -0.35, 0.35, 0.9372294372294372},
		{"unequal sizes, 90 %", []float64{41.2, 39.8, 40.5, 44.1, 40.9, 39.5, 42.3, 40.1, 41.7, 43.0},
			[]float64{35.1, 36.8, 34.9, 37.2, 35.6, 38.9, 36.1, 35.3}, 0.90, -5.05, -6.2, -4.0, 4.57059280588692e-05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := HodgesLehmann(tc.a, tc.b, tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Exact || s.Achieved < tc.conf {
				t.Errorf("exact %v achieved %v, want an exact interval of at least %v", s.Exact, s.Achieved, tc.conf)
			}
			near(t, "estimate", s.Estimate, tc.est, 1e-9)
			near(t, "low", s.Low, tc.lo, 1e-9)
			near(t, "high", s.High, tc.hi, 1e-9)
			p, err := MannWhitney(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "p", p, tc.pvalue, 1e-9)
		})
	}
}

func TestCompareRatioAgainstR(t *testing.T) {
	c, err := Compare(blocks1500, blocks9000, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "ratio", c.Ratio.Estimate, 1.36628916639628, 1e-9)
	near(t, "ratio low", c.Ratio.Low, 1.32895989842345, 1e-9)
	near(t, "ratio high", c.Ratio.High, 1.40884562480161, 1e-9)
	if !c.Significant {
		t.Error("a 1.37x shift with disjoint samples is not significant")
	}
	near(t, "median A", c.MedianA, 19011, 0)
	near(t, "median B", c.MedianB, 25953.5, 0)
	// The precision is the printed interval's: half of 7728 - 6218, and
	// half of 1.40884562480161 - 1.32895989842345 in percent.
	near(t, "half-width", c.Precision.HalfWidth, 755, 1e-12)
	near(t, "half-width %", c.Precision.HalfWidthPct, 3.99428632, 1e-8)
	near(t, "n", c.Precision.N, 6, 0)
}

func TestCompareNoDifference(t *testing.T) {
	a := []float64{10.1, 9.8, 10.4, 10.0, 9.7, 10.3}
	b := []float64{10.2, 9.9, 10.05, 10.35, 9.75, 10.15}
	c, err := Compare(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c.Significant {
		t.Errorf("interval %v..%v excludes 0", c.Shift.Low, c.Shift.High)
	}
	// The interval is -0.35 to +0.35 around A's median 10.05: a
	// half-width of 0.35 (3.48 % of the ratio interval). A +-1 % interval
	// takes 6 (3.48 / 1)^2 runs per arm, +-0.5 % four times as many, and a
	// target the interval already meets no more than the runs made.
	near(t, "half-width", c.Precision.HalfWidth, 0.35, 1e-12)
	hw := (c.Ratio.High - c.Ratio.Low) / 2 * 100
	near(t, "half-width %", c.Precision.HalfWidthPct, hw, 1e-12)
	if got, want := c.Precision.RunsFor(1), int(math.Ceil(6*hw*hw)); got != want || got < 70 || got > 75 {
		t.Errorf("runs for +-1 %%: %d, want %d (6 x %.3g^2)", got, want, hw)
	}
	if r1, r05 := c.Precision.RunsFor(1), c.Precision.RunsFor(0.5); r05 < 4*r1-4 || r05 > 4*r1 {
		t.Errorf("runs for +-0.5 %%: %d, want four times the %d for +-1 %%", r05, r1)
	}
	if got := c.Precision.RunsFor(hw * 1.01); got > 6 {
		t.Errorf("runs for a target the interval meets: %d, want at most the 6 made", got)
	}
}

func TestMannWhitneyTiesNormalAgainstR(t *testing.T) {
	// Rounded values with many ties and 30 per arm: the normal
	// approximation with tie and continuity correction
	// (wilcox.test(b, a, exact = FALSE, correct = TRUE)).
	a := []float64{97, 101, 96, 108, 102, 96, 102, 104, 103, 98, 108, 102, 97, 89, 106, 100, 100, 105, 104, 103, 105, 104, 100, 90, 103, 100, 99, 93, 98, 102}
	b := []float64{110, 102, 105, 103, 96, 101, 101, 103, 109, 107, 102, 102, 106, 106, 100, 99, 105, 107, 102, 107, 105, 100, 105, 97, 110, 113, 101, 98, 106, 102}
	p, err := MannWhitney(a, b)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "p", p, 0.0169079521667762, 1e-9)
	s, err := HodgesLehmann(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if s.Exact || !(s.Low < s.Estimate && s.Estimate < s.High) || s.Low <= 0 {
		t.Errorf("ties: %+v, want an approximate interval above 0 around the estimate", s)
	}
}

func TestDriftAgainstR(t *testing.T) {
	// n <= 9: the exact permutation p-value (cor.test, exact = TRUE).
	up := Drift([]float64{10, 10.4, 10.2, 10.9, 11.3, 11.1, 11.8, 12.0})
	near(t, "rho", up.Rho, 0.95238095238095255, 1e-12)
	near(t, "p", up.P, 0.00114087301587302, 1e-12)
	flat := Drift([]float64{5.1, 4.9, 5.3, 5.0, 5.2, 4.8, 5.05})
	near(t, "rho", flat.Rho, -0.214285714285714, 1e-12)
	near(t, "p", flat.P, 0.661507936507936, 1e-12)
	// Four runs falling steadily are not evidence of drift (p = 2/24).
	near(t, "p", Drift([]float64{4, 3, 2, 1}).P, 0.0833333333333333, 1e-12)
	// n > 9: the t approximation (cor.test, exact = FALSE).
	long := Drift([]float64{99.6, 101.18, 103.09, 100.87, 102.42, 103.13, 104.21, 103.76, 106.48, 104.86, 105.92, 106.98})
	near(t, "rho", long.Rho, 9.37062937062937e-01, 1e-12)
	near(t, "p", long.P, 6.99316495321054e-06, 1e-9)
	if d := Drift([]float64{1, 1, 1, 1}); !math.IsNaN(d.P) {
		t.Errorf("constant sample: p %v, want NaN", d.P)
	}
}

func TestQuantileMADAgainstR(t *testing.T) {
	x := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	near(t, "median", Median(x), 3.5, 0)
	near(t, "q90", Quantile(x, 0.9), 6.9, 1e-12)
	near(t, "mad", MAD(x), 2, 0)
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	if x[0] != 3 {
		t.Error("Median sorted its input in place")
	}
}

func TestOutliers(t *testing.T) {
	x := []float64{25.1, 24.8, 25.3, 25.0, 25.2, 9.7, 24.9}
	got := Outliers(x)
	if len(got) != 1 || got[0] != 5 {
		t.Errorf("outliers %v, want [5]", got)
	}
	if got := Outliers([]float64{25.1, 24.8, 25.3, 25.0, 25.2}); got != nil {
		t.Errorf("outliers in a tight sample: %v", got)
	}
}

func TestTooSmall(t *testing.T) {
	if _, err := Compare([]float64{1}, []float64{2, 3}, 0.95); err == nil {
		t.Error("one value per arm accepted")
	}
}

func TestUCDF(t *testing.T) {
	// P(U <= 0) for m = n = 3 is 1/C(6,3) = 1/20 (R: pwilcox(0, 3, 3)).
	c := uCDF(3, 3)
	near(t, "P(U<=0)", c[0], 0.05, 1e-15)
	near(t, "P(U<=9)", c[9], 1, 1e-15)
	// The distribution is symmetric: P(U <= k) = 1 - P(U <= mn-k-1).
	c = uCDF(7, 5)
	for k := 0; k < 35; k++ {
		near(t, "symmetry", c[k], 1-c[35-k-1], 1e-12)
	}
}

// The cached tables are uCDF's, each size once, and the cache stops
// growing at uCDFCacheMax.
func TestCachedUCDF(t *testing.T) {
	for _, mn := range [][2]int{{3, 3}, {7, 5}, {5, 7}, {50, 50}} {
		want := uCDF(mn[0], mn[1])
		got := cachedUCDF(mn[0], mn[1])
		if !slices.Equal(got, want) {
			t.Fatalf("cachedUCDF(%d, %d) differs from uCDF", mn[0], mn[1])
		}
		if again := cachedUCDF(mn[0], mn[1]); &again[0] != &got[0] {
			t.Errorf("cachedUCDF(%d, %d) built its table twice", mn[0], mn[1])
		}
	}
	for m := 2; m <= 20; m++ {
		for n := 2; n <= 20; n++ {
			cachedUCDF(m, n)
		}
	}
	uCDFCache.Lock()
	size := len(uCDFCache.m)
	uCDFCache.Unlock()
	if size > uCDFCacheMax {
		t.Errorf("%d tables cached, want at most %d", size, uCDFCacheMax)
	}
	if c := cachedUCDF(20, 19); !slices.Equal(c, uCDF(20, 19)) {
		t.Error("a size asked for once the cache is full: not uCDF's table")
	}
}
