package pmtu

import (
	"fmt"
	"io"
	"time"
)

// WriteText writes the human report: each direction's verdict, sizes,
// local interface and detail.
func (rep *Report) WriteText(w io.Writer) {
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
		fmt.Fprintf(w, "%-8s %s -> %s  path MTU %d  %s%s\n", r.Direction, r.From, r.To, r.PathMTU, r.Verdict, mark)
		fmt.Fprintf(w, "         %s\n", r.Line())
		local := fmt.Sprintf("local MTU %d", r.LocalMTU)
		if r.LocalIface != "" {
			local += " (" + r.LocalIface + ")"
		}
		if r.PeerMTU > 0 {
			local += fmt.Sprintf(", receiving interface MTU %d", r.PeerMTU)
		}
		fmt.Fprintf(w, "         %s; %d probes in %s\n", local, r.Probes, r.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(w, "         %s\n", r.Detail)
	}
	if rep.Error != "" {
		fmt.Fprintf(w, "error: %s\n", rep.Error)
	}
}
