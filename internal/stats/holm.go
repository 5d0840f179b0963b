package stats

import (
	"math"
	"sort"
)

// Holm returns the Holm-Bonferroni adjusted p-values of ps, in the order
// given (R's p.adjust(ps, "holm")): the i-th smallest p is multiplied by
// the number of hypotheses not yet rejected, k - i + 1, capped at 1, and
// made no smaller than the one before it. Rejecting where the adjusted p
// is at most alpha keeps the chance of one or more false rejections among
// the k at most alpha, whatever the dependence between them. A NaN p-value
// stays NaN and is not counted in k.
func Holm(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	k, prev := len(idx), 0.0
	for rank, i := range idx {
		adj := math.Min(1, float64(k-rank)*ps[i])
		prev = math.Max(prev, adj)
		out[i] = prev
	}
	return out
}
