package pmtu

import (
	"fmt"
	"io"
	"time"

	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/textout"
)

// WriteText writes the human report: each direction's verdict, sizes,
// local interface and detail.
func (rep *Report) WriteText(out io.Writer) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink pmtu %s (%s probes)\n", rep.Peer, rep.Method)
	for _, d := range rep.Directions {
		r := d.Result
		mark := ""
		if d.MeetsExpect != nil {
			if *d.MeetsExpect {
				mark = fmt.Sprintf("  meets --expect %d", rep.Expect)
			} else {
				mark = fmt.Sprintf("  BELOW --expect %d", rep.Expect)
			}
		}
		fmt.Fprintf(w, "%-8s %s -> %s  path MTU %s  %s%s\n", r.Direction, r.From, r.To, mtuText(r.PathMTU), r.Verdict, mark)
		fmt.Fprintf(w, "         %s\n", r.Line())
		local := fmt.Sprintf("local MTU %d", r.LocalMTU)
		if r.LocalIface != "" {
			local += " (" + r.LocalIface + ")"
		}
		if r.PeerMTU > 0 {
			local += fmt.Sprintf(", receiving interface MTU %d", r.PeerMTU)
		}
		fmt.Fprintf(w, "         %s; %d probes in %s%s\n", local, r.Probes, elapsedText(r.Elapsed), rttText(r.RTT))
		fmt.Fprintf(w, "         %s\n", r.Detail)
	}
	if rep.Error != "" {
		fmt.Fprintf(w, "error: %s\n", rep.Error)
	}
	return w.Err()
}

// rttText is the round trips of the answered probes as ping prints its
// own ("rtt min/avg/max"), in ms, with the median and p99 for avg: empty
// when no probe came back.
func rttText(s latency.Summary) string {
	if s.Count == 0 {
		return ""
	}
	ms := func(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }
	return fmt.Sprintf("; rtt min/p50/p99/max %s/%s/%s/%s ms (%d replies)", ms(s.Min), ms(s.P50), ms(s.P99), ms(s.Max), s.Count)
}

// mtuText is a path MTU, or "n/a" when no probe arrived.
func mtuText(mtu int) string {
	if mtu <= 0 {
		return "n/a"
	}
	return fmt.Sprint(mtu)
}

// elapsedText is how long a direction's search took: to the millisecond,
// and under one in hundredths of one (loopback takes about 0.2 ms, which
// rounded to the millisecond read "0s").
func elapsedText(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return d.Round(time.Millisecond).String()
}
