//go:build linux

package main

import "sort"

func spread(xs []float64) (med, lo, hi float64) {
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	if len(v) == 0 {
		return 0, 0, 0
	}
	med = v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return med, v[0], v[len(v)-1]
}

func median(xs []sample, f func(sample) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
