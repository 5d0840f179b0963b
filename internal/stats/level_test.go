package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMinRunsPerSide(t *testing.T) {
	// The widest interval of n values a side has level 1 - 2/C(2n, n):
	// 2/3 at n = 2, 0.9 at 3, 68/70 at 4, 250/252 at 5, 922/924 at 6.
	for _, tc := range []struct {
		conf float64
		want int
	}{{0.5, 2}, {0.6, 2}, {0.8, 3}, {0.9, 3}, {0.95, 4}, {0.97, 4}, {0.98, 5}, {0.99, 5}, {0.995, 6}, {0.999, 7}, {0, 0}, {1, 0}} {
		if got := MinRunsPerSide(tc.conf); got != tc.want {
			t.Errorf("MinRunsPerSide(%g) = %d, want %d", tc.conf, got, tc.want)
		}
	}
	// The n it gives really reaches the level and n - 1 does not, by
	// the interval HodgesLehmann computes from samples wholly apart.
	for _, conf := range []float64{0.8, 0.9, 0.95, 0.99, 0.999} {
		n := MinRunsPerSide(conf)
		for _, k := range []int{n - 1, n} {
			a, b := make([]float64, k), make([]float64, k)
			for i := range a {
				a[i], b[i] = float64(i), float64(100+i)
			}
			s, err := HodgesLehmann(a, b, conf)
			if err != nil {
				t.Fatal(err)
			}
			if s.Reached() != (k == n) {
				t.Errorf("%g, %d a side: reached %v (achieved %.4g)", conf, k, s.Reached(), s.Achieved)
			}
		}
	}
}

func TestAchievedWithFewValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"2 a side", []float64{10.1, 10.3}, []float64{12.6, 13.0}, 1 - 2.0/6},
		{"3 a side", []float64{10.1, 10.3, 10.2}, []float64{12.6, 13.0, 12.9}, 1 - 2.0/20},
		{"4 a side", []float64{10.1, 10.3, 10.2, 10.0}, []float64{12.6, 13.0, 12.9, 12.7}, 1 - 2.0/70},
		// Ties take the normal approximation, which asks for a wider
		// interval than exists: the widest one's level without ties.
		{"2 a side, ties", []float64{10, 10}, []float64{13, 13}, 1 - 2.0/6},
		{"3 a side, ties", []float64{10, 10, 11}, []float64{13, 13, 13}, 1 - 2.0/20},
	} {
		s, err := HodgesLehmann(tc.a, tc.b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.name+" achieved", s.Achieved, tc.want, 1e-12)
		if s.Reached() != (tc.want >= 0.95) {
			t.Errorf("%s: reached %v at achieved %.4g", tc.name, s.Reached(), s.Achieved)
		}
		c, err := Compare(tc.a, tc.b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		// Every pair of these samples lies wholly apart, so the interval
		// excludes 0; only a reached level makes it a difference.
		if c.Shift.Low <= 0 || c.Significant != c.Shift.Reached() {
			t.Errorf("%s: interval %g..%g significant %v reached %v", tc.name, c.Shift.Low, c.Shift.High, c.Significant, c.Shift.Reached())
		}
	}
}

func TestCILabelAndTooFew(t *testing.T) {
	s, _ := HodgesLehmann([]float64{1, 2}, []float64{3, 4}, 0.95)
	// 2 a side reach 1 - 2/6 = 66.67 %: printed rounded down, never as
	// the 67 % it did not reach.
	if got := s.CILabel(); got != "66.6 % CI" {
		t.Errorf("label %q, want 66.6 %% CI", got)
	}
	if got := s.LevelNote(); got != " (66.6 %)" {
		t.Errorf("level note %q, want \" (66.6 %%)\"", got)
	}
	s, _ = HodgesLehmann([]float64{1, 2, 5, 7}, []float64{3, 4, 6, 8}, 0.95)
	if got := s.CILabel(); got != "95 % CI" {
		t.Errorf("label %q, want 95 %% CI", got)
	}
	if got := s.LevelNote(); got != "" {
		t.Errorf("level note of a reached interval %q, want none", got)
	}
	if got := TooFew("runs", 0.95); got != "too few runs for 95 % (need 4 a side)" {
		t.Errorf("%q", got)
	}
	if got := TooFew("reports", 0.995); got != "too few reports for 99.5 % (need 6 a side)" {
		t.Errorf("%q", got)
	}
	if got := Pct(0.9); got != "90 %" {
		t.Errorf("%q", got)
	}
	if got := TooFew("runs", 0.9995); got != "too few runs for 99.95 % (need 8 a side)" {
		t.Errorf("%q", got)
	}
}

// TestPct pins how levels print: an asked level keeps the digits given and
// a level short of 1 never reads "100 %"; a reached level is rounded down,
// with one decimal only when that is not whole, so it never reads higher
// than it is (66.67 % was printed "67 %").
func TestPct(t *testing.T) {
	for _, tc := range []struct {
		conf          float64
		asked, actual string
	}{
		{0.95, "95 %", "95 %"},
		{0.9, "90 %", "90 %"},
		{1 - 2.0/20, "90 %", "90 %"},
		{0.995, "99.5 %", "99.5 %"},
		{0.9995, "99.95 %", "99.9 %"},
		{1 - 2.0/6, "66.666667 %", "66.6 %"},
		{1 - 2.0/70, "97.142857 %", "97.1 %"},
		{1 - 2.0/252, "99.206349 %", "99.2 %"},
		{0.99999999, "99.999999 %", "99.9 %"},
		{1 - 1e-12, "99.9999999999 %", "99.9 %"},
		{0.5, "50 %", "50 %"},
		{0.9499, "94.99 %", "94.9 %"},
		{1, "100 %", "100 %"},
	} {
		if got := Pct(tc.conf); got != tc.asked {
			t.Errorf("Pct(%v) = %q, want %q", tc.conf, got, tc.asked)
		}
		if got := PctAchieved(tc.conf); got != tc.actual {
			t.Errorf("PctAchieved(%v) = %q, want %q", tc.conf, got, tc.actual)
		}
	}
}

func TestOneSampleChanged(t *testing.T) {
	for _, tc := range []struct {
		before, after float64
		want          bool
	}{{100, 105, false}, {100, 105.1, true}, {100, 94.9, true}, {0, 0, false}, {0, 1e-9, true}, {-2, -2.2, true}} {
		if got := OneSampleChanged(tc.before, tc.after); got != tc.want {
			t.Errorf("OneSampleChanged(%g, %g) = %v", tc.before, tc.after, got)
		}
	}
}

// TestAANoVerdictBelowLevel simulates A/A comparisons (both samples from
// one distribution: every verdict is false) with 2, 3 and 4 runs a side,
// with and without ties, at 95 %. No verdict may come from an interval
// that did not reach 95 %: with 2 and 3 runs a side there is none at all,
// although the interval, 66.7 % and 90 % ones, excludes 0 in about a third
// and a tenth of them (which the test checks, so that it would fail if
// verdicts were read off those intervals as before). With 4 a side the
// level reached is 97.1 %, and the false verdicts stay within 5 %: their
// count is binomial with p = 2/70 (less with ties), so the allowance is
// the count that a rate of 5 % exceeds with probability at most 1e-3 (244
// of 4000, 200 expected), and likewise for the rate 2/70 of the level
// reached (about 150, 114 expected).
func TestAANoVerdictBelowLevel(t *testing.T) {
	const experiments, conf = 4000, 0.95
	limit := BinomialLimit(experiments, 1-conf, 1e-3)
	reachedLimit := BinomialLimit(experiments, 2.0/70, 1e-3)
	for _, ties := range []bool{false, true} {
		for _, runs := range []int{2, 3, 4} {
			rng := rand.New(rand.NewPCG(34, uint64(runs)))
			verdicts, excluded, unreached := 0, 0, 0
			for range experiments {
				a, b := aaDraw(rng, runs, ties), aaDraw(rng, runs, ties)
				c, err := Compare(a, b, conf)
				if err != nil {
					t.Fatal(err)
				}
				if c.Shift.Low > 0 || c.Shift.High < 0 {
					excluded++
				}
				if !c.Shift.Reached() {
					unreached++
				}
				if c.Significant {
					verdicts++
					if c.Shift.Achieved < conf || c.Ratio.Achieved < conf {
						t.Fatalf("%d a side: a verdict at %.4g, asked %g", runs, c.Shift.Achieved, conf)
					}
				}
			}
			t.Logf("%d a side, ties %v: %d of %d intervals exclude 0, %d below 95 %%, %d verdicts (limit %d)", runs, ties, excluded, experiments, unreached, verdicts, limit)
			switch {
			case runs < 4 && (verdicts != 0 || unreached != experiments):
				t.Errorf("%d a side: %d verdicts, %d intervals below the level; want none and all", runs, verdicts, unreached)
			case runs < 4 && !ties && excluded <= limit:
				t.Errorf("%d a side: only %d intervals exclude 0, within %d: the simulation cannot show the rule's effect", runs, excluded, limit)
			case runs == 4 && (verdicts > limit || verdicts > reachedLimit || unreached != 0):
				t.Errorf("4 a side: %d false verdicts of %d, above %d (5 %%) or %d (the 2/70 of the level reached), or %d intervals below the level",
					verdicts, experiments, limit, reachedLimit, unreached)
			}
		}
	}
}

// aaDraw draws n skewed, positive values (lognormal, as run times are);
// with ties, rounded to a coarse step so that most samples hold equal
// values.
func aaDraw(rng *rand.Rand, n int, ties bool) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 10 * math.Exp(0.1*rng.NormFloat64())
		if ties {
			xs[i] = math.Round(xs[i])
		}
	}
	return xs
}

func TestBinomialLimit(t *testing.T) {
	// Reference values from exact rational arithmetic (Python's
	// fractions): the smallest c with P(X > c) <= tail.
	for _, tc := range []struct {
		n       int
		p, tail float64
		want    int
	}{{2000, 0.05, 1e-3, 131}, {4000, 0.05, 1e-3, 244}, {4000, 2.0 / 70, 1e-3, 148}, {300, 0.05, 1e-3, 28}, {10, 0.5, 0.05, 8}} {
		if got := BinomialLimit(tc.n, tc.p, tc.tail); got != tc.want {
			t.Errorf("BinomialLimit(%d, %g, %g) = %d, want %d", tc.n, tc.p, tc.tail, got, tc.want)
		}
	}
}
