package mesh

import (
	"cmp"
	"slices"
	"time"
)

// DefaultPerNode is how many working pairs a node takes part in at once
// unless Options.PerNode says otherwise: what loads a node is the probes
// it sends and answers, not a pair that is only waiting out a probe
// timeout (a blackholed path's search, once per direction), so such pairs
// count only for the share of their time they work.
const DefaultPerNode = 4

// MaxPerNode bounds the pairs a node takes part in at once, working or
// waiting, and Options.PerNode: each pair holds one agent session on each
// end, an agent grants 16 by default, and others (watch, a bench) may need
// some.
const MaxPerNode = 12

// sched decides which pairs of nodes are tested when. There are no rounds:
// a pair starts as soon as both of its nodes have room for it, and among
// the pairs that could start, those of the node with the most work left go
// first, so that the node whose paths are slow (a blackholed port) is kept
// busy from the start and the whole mesh costs about what that node's
// paths cost, not the sum of the slowest pair of every round.
//
// Room is counted in work, not in pairs: a pair counts as the share of its
// time it is expected to work (not wait out probe timeouts), the smaller of
// its two nodes' shares in their finished pairs (1 before any finished),
// and a node takes pairs while their shares sum to at most budget, and
// never more than limit pairs at once (the agents' sessions). So a node
// whose pairs mostly wait runs up to limit of them at once, and a healthy
// node budget. It only decides; the caller runs the pairs and reports each
// one done. Not safe for concurrent use.
type sched struct {
	budget float64
	limit  int
	busy   []int              // pairs in flight per node
	load   []float64          // summed shares of the node's pairs in flight
	left   []map[int]bool     // partners not yet started, per node
	spent  []time.Duration    // summed time of the node's finished pairs
	waited []time.Duration    // of it, summed time only waiting out timeouts
	done   []int              // finished pairs per node
	flight map[[2]int]float64 // pairs started and not yet done: their shares
	total  time.Duration      // summed time of all finished pairs
	count  int                // finished pairs
}

// newSched schedules every pair of n nodes, budget working pairs per node at
// once (at least 1) and at most limit pairs (at least budget).
func newSched(n, budget, limit int) *sched {
	budget = max(budget, 1)
	s := &sched{budget: float64(budget), limit: max(limit, budget), busy: make([]int, n), load: make([]float64, n),
		left: make([]map[int]bool, n), spent: make([]time.Duration, n), waited: make([]time.Duration, n),
		done: make([]int, n), flight: map[[2]int]float64{}}
	for i := range s.left {
		s.left[i] = make(map[int]bool, n-1)
		for j := range n {
			if j != i {
				s.left[i][j] = true
			}
		}
	}
	return s
}

// working is the share of node i's finished pairs' time that was work, not
// waiting out timeouts (1 while none finished), at least 1/limit.
func (s *sched) working(i int) float64 {
	if s.spent[i] <= 0 {
		return 1
	}
	w := 1 - float64(s.waited[i])/float64(s.spent[i])
	return min(max(w, 1/float64(s.limit)), 1)
}

// share is the work pair (x, y) is expected to be.
func (s *sched) share(x, y int) float64 { return min(s.working(x), s.working(y)) }

// room reports whether node i can take a pair of share sh now.
func (s *sched) room(i int, sh float64) bool {
	return s.busy[i] < s.limit && (s.busy[i] == 0 || s.load[i]+sh <= s.budget+1e-9)
}

// work estimates the time node i still needs: its pairs not yet started
// times its mean pair time so far (the mean of all nodes' pairs while it
// has none, one unit while nobody has any).
func (s *sched) work(i int) time.Duration {
	per := time.Duration(1)
	switch {
	case s.done[i] > 0:
		per = max(s.spent[i]/time.Duration(s.done[i]), 1)
	case s.count > 0:
		per = max(s.total/time.Duration(s.count), 1)
	}
	return time.Duration(len(s.left[i])) * per
}

// start returns the pairs that may start now and marks them in flight.
// Each is (a, b) with a < b.
func (s *sched) start() [][2]int {
	nodes := make([]int, 0, len(s.left))
	for i := range s.left {
		if s.room(i, 1/float64(s.limit)) && len(s.left[i]) > 0 {
			nodes = append(nodes, i)
		}
	}
	return s.fill(nodes)
}

// fill starts pairs for the nodes given, the one with the most work first,
// each with its partners of most work that have room, until the node has
// no room or no partner has.
func (s *sched) fill(nodes []int) [][2]int {
	byWork := func(a, b int) bool { return s.work(a) > s.work(b) || s.work(a) == s.work(b) && a < b }
	slices.SortFunc(nodes, func(a, b int) int { return cmp.Or(cmp.Compare(s.work(b), s.work(a)), cmp.Compare(a, b)) })
	var out [][2]int
	for _, x := range nodes {
		for s.busy[x] < s.limit {
			best := -1
			for y := range s.left[x] {
				sh := s.share(x, y)
				if s.room(x, sh) && s.room(y, sh) && (best < 0 || byWork(y, best)) {
					best = y
				}
			}
			if best < 0 {
				break
			}
			p := [2]int{min(x, best), max(x, best)}
			sh := s.share(x, best)
			delete(s.left[x], best)
			delete(s.left[best], x)
			for _, i := range p {
				s.busy[i]++
				s.load[i] += sh
			}
			s.flight[p] = sh
			out = append(out, p)
		}
	}
	return out
}

// finish records pair p done after d, waited of it only waiting out probe
// timeouts. Its nodes have room again: call fill with them (after dropping
// nodes that are gone).
func (s *sched) finish(p [2]int, d, waited time.Duration) {
	sh, ok := s.flight[p]
	if !ok {
		panic("mesh: finish of a pair not in flight") // a bug in Run, not input
	}
	delete(s.flight, p)
	for _, i := range p {
		s.busy[i]--
		if s.load[i] -= sh; s.busy[i] == 0 {
			s.load[i] = 0 // no drift from summing floats
		}
		s.spent[i] += d
		s.waited[i] += min(waited, d)
		s.done[i]++
	}
	s.total += d
	s.count++
}

// drop takes node i's pairs that have not started out of the schedule (its
// agent is gone) and returns them.
func (s *sched) drop(i int) [][2]int {
	var out [][2]int
	for j := range s.left[i] {
		delete(s.left[j], i)
		out = append(out, [2]int{min(i, j), max(i, j)})
	}
	clear(s.left[i])
	sortPairs(out)
	return out
}

// rest takes every pair that has not started out of the schedule (the run
// is stopping) and returns them.
func (s *sched) rest() [][2]int {
	var out [][2]int
	for i := range s.left {
		for j := range s.left[i] {
			if i < j {
				out = append(out, [2]int{i, j})
			}
		}
	}
	for i := range s.left {
		clear(s.left[i])
	}
	sortPairs(out)
	return out
}

// inFlight is the number of pairs started and not yet done.
func (s *sched) inFlight() int { return len(s.flight) }

func sortPairs(ps [][2]int) {
	slices.SortFunc(ps, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
}
