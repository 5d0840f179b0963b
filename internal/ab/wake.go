package ab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/interlink/interlink/internal/stats"
)

// WakeDominates is the share of a round trip's p50 above which its two
// hosts' wake-ups are said to be most of it (as bench says).
const WakeDominates = 0.5

// Wakes is how much of each arm's round trip was the two hosts waking up
// (bench --mode blocks and gc split it: the median over the arm's runs of the
// wake-ups' share of the round trip's p50), and what that means for the
// verdict on a network metric. Absent when no run gave the share.
type Wakes struct {
	Share [2]*float64 `json:"median_share"`
	// Note says that wake-ups dominate an arm, beside a verdict on a
	// network metric; "" when they do not, or no network metric is judged.
	Note string `json:"note,omitempty"`
}

// wakeShare is the share of the round trip the wake-ups took in a run's
// JSON document, or nil: bench's first flow's split, or for gc the least
// share among the pairs' 2-way receive times (as gc's own verdict).
//
// dominant says the run's own verdict found the wake-ups most of the round
// trip with CPUs that did sleep (split's wake_dominant; for gc, the least
// share's pair).
func wakeShare(doc any) (share *float64, dominant bool) {
	if pairs, _ := lookup(doc, []string{"pairs"}).([]any); len(pairs) > 0 {
		for _, p := range pairs {
			if v, ok := lookup(p, []string{"two_way_split", "wake_share"}).(float64); ok && (share == nil || v < *share) {
				share = &v
				dominant, _ = lookup(p, []string{"two_way_split", "wake_dominant"}).(bool)
			}
		}
		return share, dominant
	}
	flows, _ := lookup(doc, []string{"flows"}).([]any)
	if len(flows) == 0 {
		return nil, false
	}
	v, ok := lookup(flows[0], []string{"summary", "split", "wake_share"}).(float64)
	if !ok {
		return nil, false
	}
	dominant, _ = lookup(flows[0], []string{"summary", "split", "wake_dominant"}).(bool)
	return &v, dominant
}

// wakes summarises the arms' wake-up shares and, when one dominates and a
// primary metric is a network one (a bench figure), says so.
func (r *Result) wakes() *Wakes {
	var share [2][]float64
	var dominant [2]int
	names := [2]string{r.A.Name, r.B.Name}
	for _, run := range r.Runs {
		if !run.OK() || run.WakeShare == nil {
			continue
		}
		for arm := range 2 {
			if run.Arm == names[arm] {
				share[arm] = append(share[arm], *run.WakeShare)
				if run.WakeDominant {
					dominant[arm]++
				}
			}
		}
	}
	if len(share[0]) == 0 && len(share[1]) == 0 {
		return nil
	}
	w := &Wakes{}
	var most []string
	for arm := range 2 {
		if len(share[arm]) == 0 {
			continue
		}
		m := stats.Median(share[arm])
		w.Share[arm] = &m
		// Most of the round trip, in runs whose CPUs did sleep (on CPUs
		// kept awake the wake-up parts are no idle setting's doing).
		if m >= WakeDominates && 2*dominant[arm] >= len(share[arm]) {
			most = append(most, fmt.Sprintf("%s %.0f %%", names[arm], 100*m))
		}
	}
	if len(most) > 0 && r.judgesNetwork() {
		w.Note = fmt.Sprintf("the round trip is mostly the two hosts waking up (median share of its p50: %s): a network change (MTU, switch, cabling) barely shows at this load; see check CPU-IDLE",
			strings.Join(most, ", "))
	}
	return w
}

// judgesNetwork says a primary metric is a figure of the path (a bench or
// gc figure other than CPU cost).
func (r *Result) judgesNetwork() bool {
	for _, m := range r.Metrics {
		if !slices.Contains(r.Primary, m.Name) || m.known == nil {
			continue
		}
		if (m.known.schema == "interlink.bench/v1" || m.known.schema == "interlink.gc/v1") && !strings.Contains(m.Name, "cpu") && !strings.Contains(m.Name, "softirq") {
			return true
		}
	}
	return false
}
