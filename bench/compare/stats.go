//go:build linux

package main

import "github.com/interlink/interlink/bench/goal"

// spread is the median of xs with their minimum and maximum.
func spread(xs []float64) (med, lo, hi float64) { return goal.Spread(xs) }

// median is the median of f over the samples.
func median(xs []sample, f func(sample) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	med, _, _ := goal.Spread(v)
	return med
}
