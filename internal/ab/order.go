package ab

import "math/rand/v2"

// Slot is one run in the schedule.
type Slot struct {
	Arm    int  // 0 for A, 1 for B
	Warmup bool // discarded from the statistics
}

// Schedule returns the order of runs: warm-up runs alternating A B first,
// then runs measured runs per arm, in ABBA blocks or in A B pairs each
// shuffled by a generator seeded with seed.
func Schedule(order Order, runs, warmup int, seed int64) []Slot {
	var s []Slot
	for i := 0; i < warmup; i++ {
		s = append(s, Slot{Arm: 0, Warmup: true}, Slot{Arm: 1, Warmup: true})
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)>>1|1))
	for i := 0; i < runs; i++ {
		first := 0
		switch order {
		case OrderRandom:
			first = rng.IntN(2)
		default:
			first = i % 2 // A B, B A, A B, ...
		}
		s = append(s, Slot{Arm: first}, Slot{Arm: 1 - first})
	}
	return s
}
