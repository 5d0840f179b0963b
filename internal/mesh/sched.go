package mesh

import (
	"cmp"
	"slices"
	"time"
)

// DefaultPerNode is how many pairs a node takes part in at once unless
// Options.PerNode says otherwise. Each pair holds one agent session on
// each end (an agent grants 16 by default), and a blackholed path's search
// waits out its probe timeouts, so a node whose paths are slow gets
// through them PerNode at a time.
const DefaultPerNode = 4

// MaxPerNode bounds Options.PerNode: an agent grants 16 sessions by
// default, and others (watch, a bench) may need some.
const MaxPerNode = 12

// sched decides which pairs of nodes are tested when. There are no rounds:
// a pair starts as soon as both of its nodes have a free slot (each node
// takes part in at most budget pairs at once), and among the pairs that
// could start, those of the node with the most work left go first, so that
// the node whose paths are slow (a blackholed port: every search waits out
// its timeouts) is kept busy from the start and the whole mesh costs about
// what that node's paths cost, not the sum of the slowest pair of every
// round. It only decides; the caller runs the pairs and reports each one
// done. Not safe for concurrent use.
type sched struct {
	budget int
	busy   []int           // pairs in flight per node
	left   []map[int]bool  // partners not yet started, per node
	spent  []time.Duration // summed time of the node's finished pairs
	done   []int           // finished pairs per node
	flight map[[2]int]bool // pairs started and not yet done
	total  time.Duration   // summed time of all finished pairs
	count  int             // finished pairs
}

// newSched schedules every pair of n nodes, budget pairs per node at once
// (at least 1).
func newSched(n, budget int) *sched {
	s := &sched{budget: max(budget, 1), busy: make([]int, n), left: make([]map[int]bool, n),
		spent: make([]time.Duration, n), done: make([]int, n), flight: map[[2]int]bool{}}
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
		if s.busy[i] < s.budget && len(s.left[i]) > 0 {
			nodes = append(nodes, i)
		}
	}
	return s.fill(nodes)
}

// fill starts pairs for the nodes given, the one with the most work first,
// each with its free partners of most work, until the node's budget is used
// or no partner is free.
func (s *sched) fill(nodes []int) [][2]int {
	byWork := func(a, b int) bool { return s.work(a) > s.work(b) || s.work(a) == s.work(b) && a < b }
	slices.SortFunc(nodes, func(a, b int) int { return cmp.Or(cmp.Compare(s.work(b), s.work(a)), cmp.Compare(a, b)) })
	var out [][2]int
	for _, x := range nodes {
		for s.busy[x] < s.budget {
			best := -1
			for y := range s.left[x] {
				if s.busy[y] < s.budget && (best < 0 || byWork(y, best)) {
					best = y
				}
			}
			if best < 0 {
				break
			}
			p := [2]int{min(x, best), max(x, best)}
			delete(s.left[x], best)
			delete(s.left[best], x)
			s.busy[x]++
			s.busy[best]++
			s.flight[p] = true
			out = append(out, p)
		}
	}
	return out
}

// finish records pair p done after d. Its nodes have a slot free again:
// call fill with them (after dropping nodes that are gone).
func (s *sched) finish(p [2]int, d time.Duration) {
	if !s.flight[p] {
		panic("mesh: finish of a pair not in flight") // a bug in Run, not input
	}
	delete(s.flight, p)
	for _, i := range p {
		s.busy[i]--
		s.spent[i] += d
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
