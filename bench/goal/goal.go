// Package goal judges the goals of `make bench`: a figure taken per round
// of alternating runs (a ratio of interlink to the tool users would pick
// instead), reported as its median with the spread over rounds (min..max),
// met or missed. Missed collects the misses so that a comparison exits
// non-zero naming each. bench/compare and bench/gatecompare report through
// it.
package goal

import (
	"fmt"
	"sort"
	"strings"
)

// Spread returns the median of xs with their minimum and maximum; zeros
// for none.
func Spread(xs []float64) (med, lo, hi float64) {
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

// Verdict is how a goal's line ends.
func Verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

// Ratio is a goal on a ratio of medians: "Name Op Bound x Peer", e.g.
// "gate per connection <= 1.0x HAProxy".
type Ratio struct {
	Name  string
	Op    string // "<=" or ">="
	Bound float64
	Peer  string
}

func (g Ratio) String() string { return fmt.Sprintf("%s %s %.1fx %s", g.Name, g.Op, g.Bound, g.Peer) }

// Met says whether ratio r meets the goal.
func (g Ratio) Met(r float64) bool {
	if g.Op == "<=" {
		return r <= g.Bound
	}
	return r >= g.Bound
}

// Missed collects the goals a run missed.
type Missed []string

// Add records a missed goal: its name, the median ratio and the goal.
func (m *Missed) Add(name string, ratio float64, goal string) {
	*m = append(*m, fmt.Sprintf("%s: %.2f (goal %s)", name, ratio, goal))
}

// Judge returns g's line for the per-round ratios, "GOAL: ratio R [lo..hi]:
// met|missed", judged on their median, and records a miss.
func (m *Missed) Judge(g Ratio, ratios []float64) string {
	med, lo, hi := Spread(ratios)
	met := g.Met(med)
	if !met {
		m.Add(g.Name, med, fmt.Sprintf("%s %.1fx %s", g.Op, g.Bound, g.Peer))
	}
	return fmt.Sprintf("%s: ratio %.2f [spread %.2f..%.2f]: %s", g, med, lo, hi, Verdict(met))
}

// Err is nil when no goal was missed, else one error naming every miss.
func (m Missed) Err() error {
	if len(m) == 0 {
		return nil
	}
	return fmt.Errorf("%d goal(s) missed: %s", len(m), strings.Join(m, "; "))
}
