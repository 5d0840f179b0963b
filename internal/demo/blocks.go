package demo

import (
	"fmt"
	"io"

	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// The blocks chapter: one block in flight at each MTU, then
// LoadedOutstanding in flight. At one in flight an 8 KiB block's round
// trip is mostly the two hosts noticing that something arrived (an idle
// CPU or vCPU waking up); that hides what the MTU changes, and the chapter
// says so rather than draw the opposite conclusion from it. Under load the
// hosts stay awake and the wire shows.

// jumboGain compares the first two runs of a pair (the 9000 run first):
// the 9000 run's blocks/s over the 1500 run's, 0 when either is missing.
func jumboGain(runs []Bench) float64 {
	if len(runs) < 2 {
		return 0
	}
	j, s := runs[0].Summary(), runs[1].Summary()
	if j == nil || s == nil || j.PerSec <= 0 || s.PerSec <= 0 {
		return 0
	}
	return j.PerSec / s.PerSec
}

// jumboWins is the gain a comparison must show before the chapter and
// the advice say jumbo frames are faster here: less is noise on a shared
// machine.
const jumboWins = 1.05

func renderBlocks(w io.Writer, r *Result) {
	if len(r.Blocks) == 0 {
		return
	}
	title(w, 4, "What jumbo frames change for %s blocks: interlink bench --mode blocks, %s -> %s, %s each",
		blockSize(r), r.Blocks[0].From, r.Blocks[0].To, duration(r.Blocks))
	fmt.Fprintln(w, "  One block in flight, as a single session waiting on each block:")
	table(w, r.Blocks, blockRows(true))
	if g := jumboGain(r.Blocks); g > 0 {
		j, s := r.Blocks[0].Summary(), r.Blocks[1].Summary()
		rt := ""
		if j.RTT != nil && s.RTT != nil && s.RTT.P50 > 0 {
			rt = fmt.Sprintf(" and %.2fx the median round trip", float64(j.RTT.P50)/float64(s.RTT.P50))
		}
		fmt.Fprintf(w, "  At %s: %.2fx the blocks/s%s of %s.\n", r.Blocks[0].Label, g, rt, r.Blocks[1].Label)
		if b, v := wakeVerdict(r.Blocks); v != "" {
			fmt.Fprintf(w, "  %s: %s.\n", b.Label, v)
			if rj, rs, ok := restP50(r.Blocks); ok && g >= jumboWins {
				fmt.Fprintf(w, "  The wake-ups do not depend on the MTU; without them a round trip is %s at %s and %s at %s: that is what the MTU changes.\n",
					usec(rj), r.Blocks[0].Label, usec(rs), r.Blocks[1].Label)
			} else {
				fmt.Fprintln(w, "  The wake-ups do not depend on the MTU, and here they hide what it changes: compare the loaded runs below.")
			}
		} else if g < jumboWins {
			fmt.Fprintf(w, "  At one block in flight %s shows no gain here: each round trip waits for both hosts to wake up,\n", r.Blocks[0].Label)
			fmt.Fprintln(w, "  and that wait hides what the wire saves. It does not mean 1500 is better; see the loaded runs below")
			fmt.Fprintln(w, "  and 'interlink check' (CPU idle) on a real node.")
		}
		fmt.Fprintln(w, "  One run each on this machine (shared CPU, veth instead of NICs): rates and times vary between runs,")
		fmt.Fprintln(w, "  packets and fragments per block do not.")
	}
	runErrors(w, r.Blocks)
	renderLoaded(w, r)
}

// renderLoaded is the chapter's second table: the same blocks with
// LoadedOutstanding in flight.
func renderLoaded(w io.Writer, r *Result) {
	if len(r.Loaded) == 0 {
		return
	}
	fmt.Fprintf(w, "\n  %d blocks in flight (%s each), where each end has the next block to handle when it finishes one:\n", LoadedOutstanding, duration(r.Loaded))
	table(w, r.Loaded, blockRows(false))
	if g := jumboGain(r.Loaded); g > 0 {
		fmt.Fprintf(w, "  At %s: %.2fx the blocks/s of %s with %d in flight.\n", r.Loaded[0].Label, g, r.Loaded[1].Label, LoadedOutstanding)
	}
	runErrors(w, r.Loaded)
}

// blockRows are the rows of a blocks table; the full set for the runs at
// one in flight, the figures that change with load for the others.
func blockRows(full bool) []row {
	rtt := func(f func(*traffic.Latency) int64) func(*traffic.Summary) string {
		return func(s *traffic.Summary) string {
			if s.RTT == nil {
				return "-"
			}
			return usec(float64(f(s.RTT)))
		}
	}
	rows := []row{
		{"blocks/s", func(s *traffic.Summary) string { return fmt.Sprintf("%.0f", s.PerSec) }},
		{"round trip p50", rtt(func(l *traffic.Latency) int64 { return l.P50 })},
		{"  hosts waking up (p50, both ends)", wakeP50},
		{"  share of the round trip", wakeShare},
		{"round trip p99", rtt(func(l *traffic.Latency) int64 { return l.P99 })},
		{"fragments per block", func(s *traffic.Summary) string { return traffic.FormatRatio(s.FragmentsPerMessage) }},
	}
	if !full {
		return append(rows, row{"CPU per block, requester", func(s *traffic.Summary) string { return usec(s.ClientCost.CPUNsPerMsg) }},
			row{"blocks lost", func(s *traffic.Summary) string { return fmt.Sprintf("%d of %d", s.Lost, s.Sent) }})
	}
	return append(rows,
		row{"packets per block, both ways", func(s *traffic.Summary) string { return traffic.FormatRatio(s.PacketsPerMessage) }},
		row{"fragments reassembled", func(s *traffic.Summary) string { return units.FormatCount(s.ReasmReqds) }},
		row{"CPU per block, requester", func(s *traffic.Summary) string { return usec(s.ClientCost.CPUNsPerMsg) }},
		row{"CPU per block, responder", func(s *traffic.Summary) string { return usec(s.ServerCost.CPUNsPerMsg) }},
		row{"softirq per block (host)", func(s *traffic.Summary) string { return usec(s.ClientCost.SoftIRQNsPerMsg) }},
		row{"blocks lost", func(s *traffic.Summary) string { return fmt.Sprintf("%d of %d", s.Lost, s.Sent) }})
}

// blocksAdvice is the advice's line about the MTU: packets and fragments
// per block always (they do not vary between runs), and blocks/s only from
// a comparison that agrees with it, under load first.
func blocksAdvice(res *Result) string {
	if len(res.Blocks) < 2 {
		return ""
	}
	j, s := res.Blocks[0].Summary(), res.Blocks[1].Summary()
	if j == nil || s == nil || s.FragmentsPerMessage <= 0 {
		return ""
	}
	line := fmt.Sprintf("Keep the interconnect at %d end to end: an %s block is %.0f packet at %s and %.0f fragments at %s "+
		"(one lost fragment loses the whole block, 'gc cr block lost')",
		ExpectMTU, blockSize(res), j.FragmentsPerMessage, res.Blocks[0].Label, s.FragmentsPerMessage, res.Blocks[1].Label)
	switch {
	case jumboGain(res.Loaded) >= jumboWins:
		lj, ls := res.Loaded[0].Summary(), res.Loaded[1].Summary()
		line += fmt.Sprintf("; here %.0f vs %.0f blocks/s with %d in flight", lj.PerSec, ls.PerSec, LoadedOutstanding)
	case jumboGain(res.Blocks) >= jumboWins:
		line += fmt.Sprintf("; here %.0f vs %.0f blocks/s", j.PerSec, s.PerSec)
	default:
		line += "; this run's blocks/s show no gain, because the hosts' wake-ups hide the wire at this load"
	}
	return line + "."
}

// wakeVerdict is the first run whose round trip is mostly the two hosts
// waking up, with the split's line saying so; "" when none is.
func wakeVerdict(runs []Bench) (Bench, string) {
	for _, b := range runs {
		if s := b.Summary(); s != nil && s.RTT != nil {
			if v := s.Split.WakeVerdict(s.RTT.P50); v != "" {
				return b, v
			}
		}
	}
	return Bench{}, ""
}

// wakeP50 is the two wake-ups' medians added; "-" when the split does
// not know both.
func wakeP50(s *traffic.Summary) string {
	if s.Split == nil || s.Split.WakeP50Ns == nil {
		return "-"
	}
	return usec(float64(*s.Split.WakeP50Ns))
}

// wakeShare is that over the round trip's median.
func wakeShare(s *traffic.Summary) string {
	if s.Split == nil || s.Split.WakeShare == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100**s.Split.WakeShare)
}

// restP50 is each of the first two runs' round trip median without the
// two hosts' wake-ups; ok only when both runs have them.
func restP50(runs []Bench) (a, b float64, ok bool) {
	var rest [2]float64
	for i := 0; i < 2 && i < len(runs); i++ {
		s := runs[i].Summary()
		if s == nil || s.RTT == nil || s.Split == nil || s.Split.WakeP50Ns == nil {
			return 0, 0, false
		}
		rest[i] = float64(s.RTT.P50 - *s.Split.WakeP50Ns)
	}
	return rest[0], rest[1], len(runs) >= 2
}
