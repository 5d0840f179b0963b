package ab

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
)

// heavyTailed draws wall times around 20 ms as a shared machine gives
// them: lognormal jitter of about 2 %, and in one run of six a scheduler
// delay of Cauchy-distributed size (capped at 2x).
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

// multiResult is fakeResult with several metrics, the first two runs of
// every arm without a value for the metrics listed in sparse.
func multiResult(vals map[string][2][]float64, order []string, sparse map[string]bool, expect ...string) *Result {
	s := Spec{A: Arm{Name: "A"}, B: Arm{Name: "B"}, Runs: len(vals[order[0]][0])}
	for _, name := range order {
		m, _ := ParseMetric(name + "=(x)")
		s.Metrics = append(s.Metrics, m)
	}
	s.defaults()
	for _, x := range expect {
		e, _ := ParseExpect(x)
		s.Expect = append(s.Expect, e)
	}
	r := newResult(s)
	for i, slot := range Schedule(OrderABBA, s.Runs, 0, 0) {
		run := Run{Index: i, Arm: []string{"A", "B"}[slot.Arm], Metrics: map[string]float64{}}
		for _, name := range order {
			if !(sparse[name] && i >= 2) {
				run.Metrics[name] = vals[name][slot.Arm][i/2]
			}
		}
		r.Runs = append(r.Runs, run)
	}
	r.finish()
	return r
}

// TestAdviceChecksAgainstPrintedInterval reads the summary as a reader
// would: the half-width is half the printed interval's width (to the
// printed rounding), and the runs are the printed arithmetic.
func TestAdviceChecksAgainstPrintedInterval(t *testing.T) {
	re := regexp.MustCompile(`the 95 % CI ([-+][0-9.]+) % to ([-+][0-9.]+) % includes 0 \(half-width ([0-9.e+]+) % at ([0-9.]+) runs per arm(?:\); about ([0-9.]+) \* \(([0-9.e+]+) / 1\)\^2 = ([0-9]+) runs per arm would narrow it to \+-1 %|: within \+-1 % already\))`)
	rng := rand.New(rand.NewPCG(28, 10))
	checked, already := 0, 0
	for range 300 {
		a, b := heavyTailed(rng, 8), heavyTailed(rng, 8)
		r := multiResult(map[string][2][]float64{"wall": {a, b}}, []string{"wall"}, nil)
		s := r.Stats[0].Summary
		if r.Stats[0].Significant {
			continue
		}
		m := re.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("summary does not read as interval plus advice: %q", s)
		}
		num := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
		lo, hi, hw, n := num(1), num(2), num(3), num(4)
		if math.Abs((hi-lo)/2-hw) > 0.05+0.005*hw {
			t.Errorf("half-width %v %% beside the printed interval %v..%v %%: %q", hw, lo, hi, s)
		}
		if m[7] == "" {
			already++
			if hw > 1 {
				t.Errorf("within +-1 %% already at a half-width of %v %%", hw)
			}
			continue
		}
		checked++
		if num(5) != n || num(6) != hw || num(7) != math.Ceil(n*hw*hw) || hw <= 1 {
			t.Errorf("advice %s * (%s / 1)^2 = %s at %v runs and +-%v %%: %q", m[5], m[6], m[7], n, hw, s)
		}
	}
	if checked < 200 {
		t.Errorf("only %d summaries carried advice (%d within +-1 %% already)", checked, already)
	}
}
