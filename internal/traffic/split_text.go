package traffic

import (
	"fmt"
	"io"
	"strings"

	"github.com/interlink/interlink/internal/units"
)

// SplitPart is one part of a split round trip, named for people.
type SplitPart struct {
	Name string
	L    *Latency // nil: n/a
}

// Parts are the split's four parts in the order a block meets them.
func (sp *Split) Parts() []SplitPart {
	return []SplitPart{{"requester wake-up", sp.RequesterWake}, {"responder wake-up", sp.ResponderWake},
		{"responder work", sp.ResponderWork}, {"network and stacks (both ways)", sp.NetworkAndStacks}}
}

// percentiles is "p50 / p90 / p99" of l, or n/a.
func percentiles(l *Latency) string {
	if l == nil {
		return units.NotAvailable
	}
	return fmt.Sprintf("%s / %s / %s", us(l.P50), us(l.P90), us(l.P99))
}

// AccountedLine says how far the parts' p50s add up to the round trip's,
// and why not when they miss it; "" when a part is unknown.
func (sp *Split) AccountedLine(rttP50 int64) string {
	if sp.AccountedPercent == nil {
		return ""
	}
	l := fmt.Sprintf("the parts' p50s add up to %s %% of the round trip's p50 (%s)", units.FormatPercent(*sp.AccountedPercent, 0), us(rttP50))
	if sp.Unaccounted != "" {
		l += ": " + sp.Unaccounted
	}
	return l
}

// writeSplit writes a blocks flow's round trip split into its parts,
// what the stamps cannot see, and the hosts' idle wake-ups.
func writeSplit(w io.Writer, s Summary) {
	sp := s.Split
	if sp == nil {
		return
	}
	fmt.Fprintf(w, "  round trip split (p50 / p90 / p99), from the kernel's receive stamps at both ends (the same blocks, 1 in %d):\n", SplitEvery)
	for _, p := range sp.Parts() {
		fmt.Fprintf(w, "    %-31s %s\n", p.Name, percentiles(p.L))
	}
	if s.RTT != nil {
		if l := sp.AccountedLine(s.RTT.P50); l != "" {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	for _, m := range sp.Missing {
		fmt.Fprintf(w, "    n/a: %s\n", m)
	}
	fmt.Fprintf(w, "    (%s)\n", sp.StampNote())
	if n := sp.IdleNote(); n != "" {
		fmt.Fprintf(w, "    (%s)\n", n)
	} else {
		fmt.Fprintln(w, "    (the CPUs' idle states: n/a (no cpuidle at an end): wake-ups the stamps cannot place are not counted)")
	}
}

// wakeVerdicts are the lines that say a flow's round trip is mostly the
// hosts waking up.
func (rep Report) wakeVerdicts() []string {
	var out []string
	for _, f := range rep.Flows {
		if f.Summary.RTT == nil {
			continue
		}
		if v := f.Summary.Split.WakeVerdict(f.Summary.RTT.P50); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// writeWakeVerdicts writes the wake-up verdicts first in the summary.
func (rep Report) writeWakeVerdicts(w io.Writer) {
	for _, v := range rep.wakeVerdicts() {
		fmt.Fprintln(w, strings.ToUpper(v[:1])+v[1:])
	}
}
