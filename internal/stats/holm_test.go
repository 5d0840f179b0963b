package stats

import (
	"math"
	"testing"
)

func TestHolm(t *testing.T) {
	// By hand: sorted 0.005 0.01 0.03 0.04 times 4, 3, 2, 1 is 0.02, 0.03,
	// 0.06, 0.04, the last raised to 0.06 to keep the order (R's
	// p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") is 0.03 0.06 0.06 0.02).
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	for i, want := range []float64{0.03, 0.06, 0.06, 0.02} {
		near(t, "holm", got[i], want, 1e-12)
	}
	// NaN stays out of the family; large p is capped at 1.
	got = Holm([]float64{0.5, math.NaN(), 0.02})
	near(t, "holm", got[0], 0.5, 1e-12)
	near(t, "holm", got[2], 0.04, 1e-12)
	if !math.IsNaN(got[1]) {
		t.Errorf("NaN adjusted to %v", got[1])
	}
	near(t, "holm", Holm([]float64{0.6, 0.7})[0], 1, 1e-12)
}
