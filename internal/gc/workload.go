package gc

import (
	"math"
	"math/rand/v2"
	"sort"
)

// masterOf is the node that masters block b among n: a hash, the same on
// every node (Oracle hashes resources to instances too), so that blocks
// next to each other, and the hottest blocks of a skewed working set, are
// spread over the nodes.
func masterOf(b uint32, n int) int {
	x := uint64(b) + 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return int(x % uint64(n))
}

// picker draws the blocks and modes of requests: blocks from the working
// set by a zipf law of exponent skew (0: uniform), block 0 the hottest;
// current mode with probability share.
type picker struct {
	rng   *rand.Rand
	cdf   []float64 // cumulative weights; nil for uniform
	n     int
	share float64
}

func newPicker(s Spec, seed uint64) *picker {
	p := &picker{rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), n: s.Blocks, share: s.CurrentShare}
	if s.Skew > 0 {
		p.cdf = make([]float64, s.Blocks)
		sum := 0.0
		for k := range p.cdf {
			sum += math.Pow(float64(k+1), -s.Skew)
			p.cdf[k] = sum
		}
		for k := range p.cdf {
			p.cdf[k] /= sum
		}
	}
	return p
}

// next returns a block and whether the request is in current mode.
func (p *picker) next() (uint32, bool) {
	var b int
	if p.cdf == nil {
		b = p.rng.IntN(p.n)
	} else {
		u := p.rng.Float64()
		b = sort.SearchFloat64s(p.cdf, u)
		if b >= p.n {
			b = p.n - 1
		}
	}
	return uint32(b), p.share > 0 && p.rng.Float64() < p.share
}
