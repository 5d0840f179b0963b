package storage

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// WriteText renders r for a terminal.
func WriteText(out io.Writer, r *Result) error {
	w := textout.New(out)
	fs := r.Filesystem
	fmt.Fprintf(w, "interlink storage bench %s --profile %s: ", termtext.Clean(r.Spec.Path), r.Spec.Profile)
	size, secs := units.FormatBytes(float64(r.Spec.SizeBytes)), time.Duration(r.Duration).Seconds()
	if len(r.LimitedBy) > 0 || r.Interrupted || r.Error != "" {
		// "64.00 GiB in 1.47 s" read as done when the time limit (or a
		// full disk) cut the run at 1.3 GiB: the size is what was asked.
		fmt.Fprintf(w, "%.2f s, stopped before the %s asked (see below)", secs, size)
	} else {
		fmt.Fprintf(w, "%s in %.2f s", size, secs)
	}
	if r.Spec.Direct {
		fmt.Fprint(w, ", O_DIRECT")
	}
	fmt.Fprintln(w)
	if fs.MountPoint != "" {
		fmt.Fprintf(w, "  on %s (%s from %s), options %s\n", termtext.Clean(fs.MountPoint), termtext.Clean(fs.Type),
			termtext.Clean(fs.Source), termtext.Clean(fs.Options))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, s := range r.Steps {
		fmt.Fprintf(w, "\n  %s\n", s.Name)
		fmt.Fprintln(tw, "    op\tcount\tper sec\tMB/s\tp50\tp99\tp99.9\tmax\t")
		for _, o := range s.Ops {
			if o.Count == 0 {
				continue
			}
			mbs := "-"
			if o.Bytes > 0 {
				mbs = fmt.Sprintf("%.1f", o.BytesPerSec/1e6)
			}
			l := o.Latency
			fmt.Fprintf(tw, "    %s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", o.Name, o.Count, o.PerSec, mbs, dur(l.P50), dur(l.P99), dur(l.P999), dur(l.Max))
		}
		tw.Flush()
	}
	if r.NFS != nil {
		writeNFS(w, r.NFS)
	}
	if r.Emulation != nil {
		writeEmulation(w, r.Emulation)
	}
	perIO := "no I/O made" // no per-I/O figure, not a 0
	if r.CPUNsPerIO > 0 {
		perIO = fmt.Sprintf("%.1f us per I/O", r.CPUNsPerIO/1e3)
	}
	fmt.Fprintf(w, "\n  CPU: %s (user %.2f s, system %.2f s)\n", perIO,
		time.Duration(r.CPUUserNs).Seconds(), time.Duration(r.CPUSysNs).Seconds())
	for _, l := range r.LimitedBy {
		fmt.Fprintf(w, "WARNING: limited by %s\n", l)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "WARNING: interrupted: the figures cover what ran before Ctrl-C")
	}
	if r.Error != "" {
		fmt.Fprintf(w, "FAILED: %s: the figures cover what ran before it\n", termtext.Clean(r.Error))
	}
	return w.Err()
}

func dur(ns int64) string {
	switch d := time.Duration(ns); {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	default:
		return fmt.Sprintf("%.1fus", float64(ns)/1e3)
	}
}
