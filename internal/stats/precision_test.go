package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// heavyTailed draws n wall times around 20 ms the way a shared machine
// gives them: lognormal jitter of about 2 %, and in one run of six a
// scheduler delay whose size is Cauchy-distributed (capped at 2x).
func heavyTailed(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		x := 20e6 * math.Exp(0.02*rng.NormFloat64())
		if rng.IntN(6) == 0 {
			x += math.Min(20e6, 20e6*0.03*math.Abs(math.Tan(math.Pi*(rng.Float64()-0.5))))
		}
		xs[i] = x
	}
	return xs
}

// normal draws n values of mean 1000 and standard deviation 30.
func normal(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 1000 + 30*rng.NormFloat64()
	}
	return xs
}

// TestAdviceFollowsInterval: on heavy-tailed runs, the advice is the
// printed interval's arithmetic. With N runs per arm and an interval of
// half-width h % (half of its printed high minus low), the runs advised for
// +-t % are the first whole number at or above N (h/t)^2, so the advice
// never promises a narrower interval than the current one at N runs, and
// it asks for more runs than N exactly when h exceeds t (N is the harmonic
// mean of the arms' counts when a run failed, so not always whole). The pooled-MAD power
// formula this replaced failed it: it advised 15 runs for 1 % beside an
// interval of -9.9 % to +1.1 % at 8.
func TestAdviceFollowsInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	for i := range 500 {
		n := 4 + rng.IntN(20)
		a, b := heavyTailed(rng, n), heavyTailed(rng, n-rng.IntN(2))
		c, err := Compare(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		p := c.Precision
		printed := ((c.Ratio.High - 1) - (c.Ratio.Low - 1)) / 2 * 100
		if math.Abs(p.HalfWidthPct-printed) > 1e-9*printed {
			t.Fatalf("experiment %d: half-width %v %%, the printed interval's is %v %%", i, p.HalfWidthPct, printed)
		}
		if want := 2 * float64(len(a)*len(b)) / float64(len(a)+len(b)); p.N != want {
			t.Fatalf("experiment %d: N %v, want %v", i, p.N, want)
		}
		for _, target := range []float64{0.5, 1, 2, 5} {
			runs := float64(p.RunsFor(target))
			need := p.N * (p.HalfWidthPct / target) * (p.HalfWidthPct / target)
			if runs < need || runs >= need+1 {
				t.Fatalf("experiment %d: %v runs advised for +-%v %%, the interval (+-%.3g %% at %v runs) says %.4g", i, runs, target, p.HalfWidthPct, p.N, need)
			}
			// At the runs advised, the interval's own scaling gives at
			// most the target; never a claim beyond the current interval.
			if got := p.HalfWidthPct * math.Sqrt(p.N/runs); got > target*(1+1e-12) {
				t.Fatalf("experiment %d: advice for +-%v %% implies +-%.3g %%", i, target, got)
			}
			if wider := p.HalfWidthPct > target; wider && runs <= p.N || !wider && runs > math.Ceil(p.N) {
				t.Fatalf("experiment %d: half-width %.3g %% at %v runs, %v runs advised for +-%v %%", i, p.HalfWidthPct, p.N, runs, target)
			}
		}
	}
}

// TestAdviceAppliedReachesTarget runs the advice: from 8 runs per arm, the
// runs advised for +-1 %, simulated, give an interval whose half-width is
// about 1 %. The 8-run interval is itself a noisy measure of the noise, so
// single experiments scatter: the median over 200 lies within a factor 1.3
// of the target and 90 % of them within a factor 3 (the 8-run exact
// interval, at an achieved level above 95 %, is a little wider than the
// scaling assumes, so the advice errs towards more runs). Halving the
// exponent (N h/t runs) puts the median at 1.5 to 1.7 and fails.
func TestAdviceAppliedReachesTarget(t *testing.T) {
	for _, d := range []struct {
		name   string
		draw   func(*rand.Rand, int) []float64
		target float64
	}{{"heavy-tailed", heavyTailed, 1}, {"normal", normal, 1}} {
		rng := rand.New(rand.NewPCG(28, 3))
		var got []float64
		beyond := 0
		for range 200 {
			c, err := Compare(d.draw(rng, 8), d.draw(rng, 8), 0.95)
			if err != nil {
				t.Fatal(err)
			}
			runs := c.Precision.RunsFor(d.target)
			if runs > 1000 { // more than ab --runs takes
				beyond++
				continue
			}
			runs = max(runs, 2)
			c2, err := Compare(d.draw(rng, runs), d.draw(rng, runs), 0.95)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c2.Precision.HalfWidthPct/d.target)
		}
		sort.Float64s(got)
		q := func(p float64) float64 { return got[int(math.Round(p*float64(len(got)-1)))] }
		t.Logf("%s: %d applied (%d advised beyond 1000 runs); achieved/target q05 %.3f median %.3f q95 %.3f", d.name, len(got), beyond, q(0.05), q(0.5), q(0.95))
		if beyond > 10 || q(0.5) < 1/1.3 || q(0.5) > 1.3 || q(0.05) < 1.0/3 || q(0.95) > 3 {
			t.Errorf("%s: the advice applied gave half-widths of %.3f (median), %.3f..%.3f (90 %%) of the target; want within 1.3x and 3x", d.name, q(0.5), q(0.05), q(0.95))
		}
	}
}
