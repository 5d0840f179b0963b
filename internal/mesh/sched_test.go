package mesh

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"
)

// event is a pair ending at a simulated time.
type event struct {
	at time.Duration
	p  [2]int
}

type events []event

func (e events) Len() int           { return len(e) }
func (e events) Less(i, j int) bool { return e[i].at < e[j].at }
func (e events) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)        { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// simulate runs the scheduler of n nodes against simulated time: each pair
// takes cost(pair); dead nodes' agents are found gone when their first pair
// ends. It checks, at every step, that no node is in more than budget pairs
// and no pair starts twice, and returns when the run would end: the
// simulated wall time and the pairs that ran and that were dropped.
func simulate(t *testing.T, n, budget int, cost func([2]int) time.Duration, dead map[int]bool) (time.Duration, map[[2]int]bool, map[[2]int]bool) {
	t.Helper()
	return simulateWaits(t, n, budget, budget, cost, func([2]int) time.Duration { return 0 }, dead)
}

// simulateWaits is simulate with pairs that spend waited(pair) of their
// cost only waiting out probe timeouts, and at most limit pairs per node at
// once: it checks that no node is ever in more than limit pairs, nor in
// more than budget pairs while all its finished pairs only worked.
func simulateWaits(t *testing.T, n, budget, limit int, cost, waited func([2]int) time.Duration, dead map[int]bool) (time.Duration, map[[2]int]bool, map[[2]int]bool) {
	t.Helper()
	s := newSched(n, budget, limit)
	everWaited := make([]bool, n)
	ran, dropped := map[[2]int]bool{}, map[[2]int]bool{}
	busy := make([]int, n)
	var q events
	var now time.Duration
	begin := func(ps [][2]int) {
		for _, p := range ps {
			if ran[p] || dropped[p] {
				t.Fatalf("pair %v started twice", p)
			}
			if p[0] >= p[1] {
				t.Fatalf("pair %v not ordered", p)
			}
			ran[p] = true
			for _, i := range p {
				if busy[i]++; busy[i] > limit || busy[i] > budget && !everWaited[i] {
					t.Fatalf("node %d in %d pairs at once, budget %d (limit %d)", i, busy[i], budget, limit)
				}
			}
			heap.Push(&q, event{now + cost(p), p})
		}
	}
	gone := map[int]bool{}
	begin(s.start())
	for s.inFlight() > 0 {
		e := heap.Pop(&q).(event)
		now = e.at
		for _, i := range e.p {
			busy[i]--
			everWaited[i] = everWaited[i] || waited(e.p) > 0
		}
		s.finish(e.p, cost(e.p), waited(e.p))
		for _, i := range e.p {
			if dead[i] && !gone[i] {
				gone[i] = true
				for _, p := range s.drop(i) {
					if ran[p] || dropped[p] {
						t.Fatalf("dropped pair %v had started", p)
					}
					dropped[p] = true
				}
			}
		}
		begin(s.fill([]int{e.p[0], e.p[1]}))
	}
	return now, ran, dropped
}

// Every pair runs exactly once, no node is ever in more pairs than its
// budget, and the run ends only when all are done, whatever the pair
// times: simulated time, no clock.
func TestSchedEveryPairOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 4, 7, 16, 33} {
		for _, budget := range []int{1, 2, 4, 12} {
			costs := map[[2]int]time.Duration{}
			cost := func(p [2]int) time.Duration {
				if _, ok := costs[p]; !ok {
					costs[p] = time.Duration(1+rng.IntN(2000)) * time.Millisecond
				}
				return costs[p]
			}
			_, ran, dropped := simulate(t, n, budget, cost, nil)
			if len(ran) != n*(n-1)/2 || len(dropped) != 0 {
				t.Errorf("n=%d budget=%d: %d pairs ran, %d dropped, want %d", n, budget, len(ran), len(dropped), n*(n-1)/2)
			}
		}
	}
}

// The promise that replaced rounds: one node whose pairs are slow (a
// blackholed port) costs about its own pairs' time divided by the budget,
// where rounds of disjoint pairs paid its slow pair in every round.
func TestSchedSlowNodeIsTheFloor(t *testing.T) {
	const n, budget, slowNode = 100, 4, 49
	slow, fast := 1500*time.Millisecond, 10*time.Millisecond
	cost := func(p [2]int) time.Duration {
		if p[0] == slowNode || p[1] == slowNode {
			return slow
		}
		return fast
	}
	took, ran, _ := simulate(t, n, budget, cost, nil)
	if len(ran) != n*(n-1)/2 {
		t.Fatalf("%d pairs ran", len(ran))
	}
	floor := time.Duration(n-1) * slow / budget // 37.1 s
	rounds := time.Duration(n-1) * slow         // 148.5 s
	if took > floor+2*slow {
		t.Errorf("run took %s of simulated time; the slow node's floor is %s (rounds: %s)", took, floor, rounds)
	}
	t.Logf("100 nodes, one slow: %s (floor %s, rounds would take %s)", took, floor, rounds)

	// All healthy: the pairs spread over the nodes, about n-1 pair times
	// of one node divided by the budget.
	took, _, _ = simulate(t, n, budget, func([2]int) time.Duration { return fast }, nil)
	if want := time.Duration(n-1) * fast / budget; took > 2*want {
		t.Errorf("healthy: %s of simulated time, want about %s", took, want)
	}
}

// Waiting is not work: a blackholed node's pairs (0.6 s each, 0.5 s of it
// waiting out probe timeouts) run up to the limit at once, so that node
// costs about its pairs' time divided by the limit, not by the budget;
// healthy nodes stay within the budget.
func TestSchedWaitingIsNotWork(t *testing.T) {
	const n, budget, limit, slowNode = 100, 4, 12, 49
	slow, wait, fast := 600*time.Millisecond, 500*time.Millisecond, 10*time.Millisecond
	bh := func(p [2]int) bool { return p[0] == slowNode || p[1] == slowNode }
	cost := func(p [2]int) time.Duration {
		if bh(p) {
			return slow
		}
		return fast
	}
	waited := func(p [2]int) time.Duration {
		if bh(p) {
			return wait
		}
		return 0
	}
	took, ran, _ := simulateWaits(t, n, budget, limit, cost, waited, nil)
	if len(ran) != n*(n-1)/2 {
		t.Fatalf("%d pairs ran", len(ran))
	}
	floor := time.Duration(n-1) * slow / limit // 5.0 s
	byBudget := time.Duration(n-1) * slow / budget
	if took > floor+2*slow {
		t.Errorf("run took %s of simulated time; waiting pairs at %d at once would take %s (at %d: %s)", took, limit, floor, budget, byBudget)
	}
	t.Logf("100 nodes, one blackholed: %s (floor %s at %d at once; %s at %d)", took, floor, limit, byBudget, budget)

	// The same pairs all working: the budget binds.
	took, _, _ = simulateWaits(t, n, budget, limit, cost, func([2]int) time.Duration { return 0 }, nil)
	if took < byBudget {
		t.Errorf("working pairs: %s, faster than the budget allows (%s)", took, byBudget)
	}
}

// A node found dead has its pairs not yet started dropped at once, none of
// them ever starts, and the others all run: the dead node blocks nothing.
func TestSchedDeadNodeBlocksNothing(t *testing.T) {
	const n = 20
	dead := map[int]bool{3: true, 11: true}
	cost := func(p [2]int) time.Duration {
		if dead[p[0]] || dead[p[1]] {
			return 5 * time.Second // a dial that times out
		}
		return 20 * time.Millisecond
	}
	took, ran, dropped := simulate(t, n, 4, cost, dead)
	if len(ran)+len(dropped) != n*(n-1)/2 {
		t.Fatalf("%d ran + %d dropped of %d", len(ran), len(dropped), n*(n-1)/2)
	}
	deadRan := 0
	for p := range ran {
		if dead[p[0]] || dead[p[1]] {
			deadRan++
		}
	}
	// Each dead node is found out by its first pairs (at most its budget
	// of them, started together), the rest dropped.
	if deadRan > 2*4 {
		t.Errorf("%d pairs with a dead node ran; want at most 8", deadRan)
	}
	if took > 5*time.Second+time.Second {
		t.Errorf("the run took %s of simulated time: the dead nodes held it back", took)
	}
}

// rest takes every pair not started, once, and leaves nothing to start.
func TestSchedRest(t *testing.T) {
	s := newSched(6, 1, 1)
	started := s.start()
	if len(started) != 3 {
		t.Fatalf("started %v", started)
	}
	rest := s.rest()
	if len(rest) != 15-3 || len(s.start()) != 0 {
		t.Fatalf("rest %d pairs", len(rest))
	}
	for _, p := range started {
		s.finish(p, time.Millisecond, 0)
		if got := s.fill([]int{p[0], p[1]}); len(got) != 0 {
			t.Fatalf("started %v after rest", got)
		}
	}
	if s.inFlight() != 0 {
		t.Fatal("pairs left in flight")
	}
}
