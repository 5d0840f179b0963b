package stats

import "math"

// BinomialLimit returns the smallest count c with P(X > c) <= tail for X
// binomial(n, p): how many of n independent trials may succeed, each with
// probability p, before the count itself is evidence (at level tail) that
// p was higher. Simulations use it to bound a method's false verdicts:
// 2000 experiments at 5 % may show up to 131 of them with tail 1e-3.
func BinomialLimit(n int, p, tail float64) int {
	lp, lq := math.Log(p), math.Log(1-p)
	lgn, _ := math.Lgamma(float64(n + 1))
	above := 1.0
	for c := 0; c <= n; c++ {
		lk, _ := math.Lgamma(float64(c + 1))
		lnk, _ := math.Lgamma(float64(n - c + 1))
		above -= math.Exp(lgn - lk - lnk + float64(c)*lp + float64(n-c)*lq)
		if above <= tail {
			return c
		}
	}
	return n
}
