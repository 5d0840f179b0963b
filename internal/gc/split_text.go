package gc

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// usOrNA is a part's p50 in us, or n/a.
func usOrNA(l *traffic.Latency) string {
	if l == nil {
		return units.NotAvailable
	}
	return fmt.Sprintf("%.1f", float64(l.P50)/1e3)
}

// SplitRow is one pair's receive time of one kind (2-way or 3-way) with
// its split, as the text and HTML renderers list them.
type SplitRow struct {
	Requester, Server, Hops string
	Split                   *traffic.Split
	RTT                     *traffic.Latency
}

// SplitRows lists every pair's split receive times, 2-way then 3-way per
// pair; a receive time without a split (or a split without one) is left
// out.
func (r *Report) SplitRows() []SplitRow {
	var out []SplitRow
	for _, p := range r.Pairs {
		for _, e := range []SplitRow{{p.Requester, p.Server, "2-way", p.TwoWaySplit, p.TwoWay}, {p.Requester, p.Server, "3-way", p.ThreeWaySplit, p.ThreeWay}} {
			if e.Split != nil && e.RTT != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// writeSplits writes every pair's receive times split into their parts
// (p50s), how far they account for the receive time, and what the stamps
// cannot see.
func (r *Report) writeSplits(w io.Writer) {
	some := false
	for _, p := range r.Pairs {
		some = some || p.TwoWaySplit != nil || p.ThreeWaySplit != nil
	}
	if !some {
		return
	}
	fmt.Fprintln(w, "\nReceive times split into their parts (p50s in us, from the kernel's receive stamps at every node; server: the master's and the holder's added on a 3-way trip):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row(tw, "requester", "server", "hops", "receive p50", "requester wake", "server wake", "server work", "network and stacks", "accounted")
	var note *traffic.Split
	why := ""
	for _, e := range r.SplitRows() {
		note = e.Split
		acc := units.NotAvailable
		if e.Split.AccountedPercent != nil {
			acc = units.FormatPercent(*e.Split.AccountedPercent, 0) + " %"
			if e.Split.Unaccounted != "" {
				acc += "*"
				why = e.Split.Unaccounted
			}
		}
		row(tw, termtext.Clean(e.Requester), termtext.Clean(e.Server), e.Hops, usOrNA(e.RTT), usOrNA(e.Split.RequesterWake), usOrNA(e.Split.ResponderWake),
			usOrNA(e.Split.ResponderWork), usOrNA(e.Split.NetworkAndStacks), acc)
	}
	tw.Flush()
	if why != "" {
		fmt.Fprintf(w, "  * more than %.0f %% off: %s\n", 100*traffic.SplitTolerance, why)
	}
	if note != nil {
		fmt.Fprintf(w, "  (%s)\n", note.StampNote())
		if n := note.IdleNote(); n != "" {
			fmt.Fprintf(w, "  (%s)\n", n)
		}
	}
}

// wakeVerdict is the first line of the report when the 2-way receive
// times of every pair split are mostly the hosts waking up, on CPUs that
// went to sleep (traffic.Split.WakeDominant); "" otherwise.
// It quotes the pair where the wake-ups weigh least.
func (r *Report) wakeVerdict() string {
	var least *Pair
	for i := range r.Pairs {
		p := &r.Pairs[i]
		sp := p.TwoWaySplit
		if sp == nil || p.TwoWay == nil || sp.WakeShare == nil {
			continue
		}
		if !sp.WakeDominant {
			return ""
		}
		if least == nil || *sp.WakeShare < *least.TwoWaySplit.WakeShare {
			least = p
		}
	}
	if least == nil {
		return ""
	}
	v := least.TwoWaySplit.WakeVerdict(least.TwoWay.P50)
	if v == "" {
		return ""
	}
	v = strings.Replace(v, "the round trip is", "the 2-way receive times are", 1)
	return strings.ToUpper(v[:1]) + v[1:] + fmt.Sprintf(" (every pair; the least: %s <- %s)", termtext.Clean(least.Requester), termtext.Clean(least.Server))
}
