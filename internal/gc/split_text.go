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
	for _, p := range r.Pairs {
		for _, e := range []struct {
			hops string
			sp   *traffic.Split
			rtt  *traffic.Latency
		}{{"2-way", p.TwoWaySplit, p.TwoWay}, {"3-way", p.ThreeWaySplit, p.ThreeWay}} {
			if e.sp == nil || e.rtt == nil {
				continue
			}
			note = e.sp
			acc := units.NotAvailable
			if e.sp.AccountedPercent != nil {
				acc = units.FormatPercent(*e.sp.AccountedPercent, 0) + " %"
				if e.sp.Unaccounted != "" {
					acc += "*"
					why = e.sp.Unaccounted
				}
			}
			row(tw, termtext.Clean(p.Requester), termtext.Clean(p.Server), e.hops, usOrNA(e.rtt), usOrNA(e.sp.RequesterWake), usOrNA(e.sp.ResponderWake),
				usOrNA(e.sp.ResponderWork), usOrNA(e.sp.NetworkAndStacks), acc)
		}
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
