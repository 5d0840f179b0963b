package storm

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// WriteText renders r for a terminal.
func WriteText(out io.Writer, r *Result) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink storm %s: %d %s clients from %d source address(es), released at once\n",
		termtext.Clean(r.Spec.Target), r.Spec.Clients, r.Spec.Protocol, r.Sources)
	fmt.Fprintf(w, "  logged on %d, failed %d, in %s\n", r.LoggedOn, r.Failed, ms(r.Duration))
	if len(r.Errors) > 0 {
		kinds := make([]string, 0, len(r.Errors))
		for k := range r.Errors {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(a, b int) bool { return r.Errors[kinds[a]] > r.Errors[kinds[b]] })
		for _, k := range kinds {
			fmt.Fprintf(w, "  %6d %s\n", r.Errors[k], k)
		}
	}
	if r.Connect != nil {
		fmt.Fprintf(w, "\n  %-18s %6s %9s %9s %9s %9s %9s\n", "since release", "n", "min", "p50", "p90", "p99", "max")
	}
	for _, row := range []struct {
		name string
		p    *Percentiles
	}{{"TCP connected", r.Connect}, {"first server byte", r.First}, {"logged on", r.Logon}} {
		if row.p == nil {
			continue
		}
		fmt.Fprintf(w, "  %-18s %6d %9s %9s %9s %9s %9s\n", row.name, row.p.N, ms(row.p.Min), ms(row.p.P50), ms(row.p.P90), ms(row.p.P99), ms(row.p.Max))
	}
	if k := r.Kernel; k != nil {
		fmt.Fprintf(w, "\n  this host's kernel during the storm: ListenOverflows %s, ListenDrops %s, SYN retransmits %s\n",
			units.FormatCount(k.ListenOverflows), units.FormatCount(k.ListenDrops), units.FormatCount(k.SYNRetrans))
	}
	if r.Fairness != nil {
		fmt.Fprintf(w, "\n  fairness across sources (Jain's index of their median logon times): %.3f\n", *r.Fairness)
	}
	peak := 1
	for _, s := range r.Timeline {
		peak = max(peak, s.LoggedOn+s.Failed)
	}
	fmt.Fprintf(w, "\n  timeline: clients ending in each interval (# logged on, x failed; bars scaled to the busiest, %d)\n", peak)
	for _, s := range r.Timeline {
		if s.LoggedOn+s.Failed == 0 {
			continue
		}
		scale := func(n int) int { return (n*40 + peak - 1) / peak }
		fmt.Fprintf(w, "  %9s %5d %5d %s%s\n", ms(s.StartNs), s.LoggedOn, s.Failed,
			strings.Repeat("#", scale(s.LoggedOn)), strings.Repeat("x", scale(s.Failed)))
	}
	return w.Err()
}

func ms(ns int64) string {
	d := time.Duration(ns)
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
}
