package storage

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/units"
)

// writeNFS renders the NFS part of a result: the mountstats delta per
// operation, then check's findings on the options.
func writeNFS(w io.Writer, n *NFS) {
	fmt.Fprintf(w, "\n  NFS %s on %s\n", termtext.Clean(n.Device), termtext.Clean(n.MountPoint))
	fmt.Fprintf(w, "    options %s\n", termtext.Clean(n.Options))
	if n.Delta == nil {
		fmt.Fprintf(w, "    no mountstats delta: %s\n", termtext.Clean(n.DeltaError))
	} else {
		d := n.Delta
		fmt.Fprintf(w, "    during the run (%s, every process on this mount): %s written, %s read by the application; %s to and %s from the server\n",
			termtext.Clean(d.File), fmtSize64(int64(d.WriteBytes+d.DirectWriteBytes)), fmtSize64(int64(d.ReadBytes+d.DirectReadBytes)),
			fmtSize64(int64(d.ServerWriteBytes)), fmtSize64(int64(d.ServerReadBytes)))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "    op\trequests\tretrans\ttimeouts\tKiB sent\tKiB recv\tavg RTT\tavg exec\terrors\t")
		for _, o := range d.Ops {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t\n", termtext.Clean(o.Op), o.Requests, o.Retransmissions(), o.MajorTimeouts,
				o.BytesSent>>10, o.BytesReceived>>10, msec(o.AvgRTT()), msec(o.AvgExecute()), units.FormatCount(o.Errors)) // n/a before Linux 5.3
		}
		tw.Flush()
		if r, t := d.Retransmissions(), d.MajorTimeouts(); r > 0 || t > 0 {
			fmt.Fprintf(w, "    WARNING: %d retransmissions, %d major timeouts during the run\n", r, t)
		}
	}
	if len(n.Findings) == 0 {
		fmt.Fprintf(w, "    check (role %s): no finding on these options\n", n.Role)
		return
	}
	fmt.Fprintf(w, "    check (role %s):\n", n.Role)
	for _, f := range n.Findings {
		fmt.Fprintf(w, "      %s %s: %s\n", f.Severity, f.Rule, termtext.Clean(f.Message))
	}
}

// msec prints a mountstats average: the kernel counts whole milliseconds.
func msec(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// writeEmulation renders what an nfs:// run sent, per procedure.
func writeEmulation(w io.Writer, e *Emulation) {
	fmt.Fprintf(w, "\n  NOTE: %s\n", EmulationNote)
	fmt.Fprintf(w, "  emulated options %q on %s:%s (rsize %d, wsize %d after the server's FSINFO)\n",
		termtext.Clean(e.Options.Raw), termtext.Clean(e.Server), termtext.Clean(e.Export), e.Rsize, e.Wsize)
	fmt.Fprintf(w, "    attribute cache %s (directories %s), noac %v, FILE_SYNC writes %v, no client cache (forcedirectio) %v\n",
		e.Options.AttrTimeout, e.Options.DirAttrTimeout, e.Options.NoAC, e.Options.SyncWrites || e.Options.Direct, e.Options.Direct)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    RPC\tcalls\tKiB sent\tKiB recv\tavg RTT\t")
	for _, p := range e.RPC {
		fmt.Fprintf(tw, "    %s\t%d\t%d\t%d\t%s\t\n", p.Proc, p.Calls, p.BytesSent>>10, p.BytesReceived>>10, msec(p.AvgRTT()))
	}
	tw.Flush()
	if e.CleanupError != "" {
		fmt.Fprintf(w, "  WARNING: the working directory was not fully removed: %s\n", termtext.Clean(e.CleanupError))
	}
}
