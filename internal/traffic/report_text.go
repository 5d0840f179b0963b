package traffic

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// WriteHeader writes the first lines of a human bench report: what runs
// against which agent.
func WriteHeader(out io.Writer, peer, agentVersion string, spec Spec) error {
	w := textout.New(out)
	s, _ := spec.Normalize()
	var what string
	switch s.Mode {
	case ModeTCP:
		what = fmt.Sprintf("%d stream(s), %s writes", s.Parallel, units.FormatBytes(float64(s.Len)))
	case ModeUDP:
		pace := "unpaced, flow-controlled by the receiver"
		switch {
		case s.Paced():
			pace = "paced to " + units.FormatRate(float64(s.RateBitsPerSec))
		case s.NoFlow:
			pace = "unpaced, no flow control"
		}
		what = fmt.Sprintf("%s datagrams, %s", units.FormatBytes(float64(s.Len)), pace)
	case ModeBlocks:
		what = fmt.Sprintf("%d B requests, %s blocks, %d outstanding", s.Request, units.FormatBytes(float64(s.Block)), s.Outstanding)
		if s.RequestsPerSec > 0 {
			what += fmt.Sprintf(", paced to %g requests/s", s.RequestsPerSec)
		}
	}
	fmt.Fprintf(w, "interlink bench %s (%s): %s, %s, %v\n", peer, termtext.Clean(agentVersion), s.Mode, what, s.Duration)
	return w.Err()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func us(ns int64) string { return fmt.Sprintf("%.1f us", float64(ns)/1e3) }

// usOf is us of a figure the kernel may not give (nil: "n/a").
func usOf(ns *int64) string {
	if ns == nil {
		return units.NotAvailable
	}
	return us(*ns)
}

// FormatRatio is a per-message packet figure with two decimals; 0 means
// it could not be computed (a counter it needs is not available, or GSO
// hid the packets), never that a message took no packets: "n/a".
func FormatRatio(v float64) string {
	if v == 0 {
		return units.NotAvailable
	}
	return fmt.Sprintf("%.2f", v)
}

// WriteInterval writes one interval line of a running bench.
func WriteInterval(out io.Writer, mode Mode, d Direction, r Role, in Interval) error {
	w := textout.New(out)
	tag := "fwd"
	if d == Reverse {
		tag = "rev"
	}
	line := fmt.Sprintf("[%s] %6s-%-6s sec  %10s  %12s", tag, secs(in.Start), secs(in.End),
		units.FormatBytes(float64(in.Bytes)), units.FormatRate(in.BitsPerSec))
	switch {
	case mode == ModeTCP && r == RoleSender:
		line += fmt.Sprintf("  retr %d  rtt %s  cwnd %s", in.Retransmits, us(in.RTT), units.FormatBytes(float64(in.CwndBytes)))
	case mode == ModeUDP && r == RoleReceiver:
		line += fmt.Sprintf("  %d datagrams, lost %d, reordered %d, jitter %s", in.Messages, in.Lost, in.Reordered, us(in.Jitter))
		if in.Truncated > 0 {
			line += fmt.Sprintf(", TRUNCATED %d", in.Truncated)
		}
	case mode == ModeUDP:
		line += fmt.Sprintf("  %d datagrams sent", in.Messages)
	case mode == ModeBlocks:
		line += fmt.Sprintf("  %d blocks", in.Messages)
		if p := in.RTTPercentiles; p != nil {
			line += fmt.Sprintf("  p50 %s  p99 %s  max %s", us(p.P50), us(p.P99), us(p.Max))
		}
		if in.LostBlocks > 0 {
			line += fmt.Sprintf("  lost %d", in.LostBlocks)
		}
	}
	fmt.Fprintln(w, line)
	return w.Err()
}

// WriteText writes the summary of a bench report: per flow and direction
// the figures, the costs, the verdict and the limits that held it back.
func (rep Report) WriteText(out io.Writer) error {
	w := textout.New(out)
	rep.writeAgentIntervals(w)
	fmt.Fprintln(w, strings.Repeat("- ", 40))
	rep.writeWakeVerdicts(w)
	for _, f := range rep.Flows {
		writeFlowHeadline(w, f)
		writeModeText(w, rep.Spec.Mode, f)
		writeLossWhere(w, f.Summary)
		if rep.Spec.Mode != ModeTCP {
			writePackets(w, f.Summary)
		}
		writeCosts(w, f)
	}
	rep.writeVerdict(w)
	return w.Err()
}

// writeAgentIntervals writes the agent's intervals when they hold what
// this end could not see live: a UDP receiver's loss and jitter, a TCP
// sender's retransmits.
func (rep Report) writeAgentIntervals(w io.Writer) {
	for _, f := range rep.Flows {
		if sd := f.Server; sd != nil && len(sd.Intervals) > 0 &&
			(rep.Spec.Mode == ModeUDP && sd.Role == RoleReceiver || rep.Spec.Mode == ModeTCP && sd.Role == RoleSender) {
			fmt.Fprintf(w, "agent (%s):\n", sd.Role)
			for _, in := range sd.Intervals {
				WriteInterval(w, rep.Spec.Mode, f.Direction, sd.Role, in)
			}
		}
	}
}

// writeFlowHeadline writes a flow's first line: what was delivered, the
// MTU and whether a packet proved it, the share of the wire limit.
func writeFlowHeadline(w io.Writer, f Flow) {
	s := f.Summary
	fmt.Fprintf(w, "%s: %s delivered in %s sec = %s", f.Direction, units.FormatBytes(float64(s.Bytes)), secs(s.Duration), units.FormatRate(s.BitsPerSec))
	switch {
	case s.MTUProven:
		fmt.Fprintf(w, ", path MTU %d (proven: %d-byte packets crossed)", s.MTU, s.LargestPacket)
	case s.MTU > 0 && s.LargestPacket > 0:
		fmt.Fprintf(w, ", interface MTU %d (not proven: the largest packet that crossed was %d bytes)", s.MTU, s.LargestPacket)
	case s.MTU > 0:
		fmt.Fprintf(w, ", interface MTU %d (not proven: no packet crossed)", s.MTU)
	}
	if s.WireLimitBitsPerSec > 0 && s.Bytes > 0 {
		fmt.Fprintf(w, ", %s %% of the %s wire limit", units.FormatPercent(s.PercentOfWireLimit, 1), units.FormatRate(s.WireLimitBitsPerSec))
	}
	fmt.Fprintln(w)
}

// writeLossWhere places a flow's loss, when it lost any.
func writeLossWhere(w io.Writer, s Summary) {
	switch {
	case s.LossBy != nil && s.Lost > 0:
		fmt.Fprint(w, "  lost where: ")
		if s.LossBy.Truncated > 0 {
			fmt.Fprintf(w, "read short (truncated) %d, ", s.LossBy.Truncated)
		}
		fmt.Fprintf(w, "sender queue %d, network %d, receiver socket buffer %d, reassembly %d\n",
			s.LossBy.SenderQueue, s.LossBy.Network, s.LossBy.SocketBuffer, s.LossBy.Reassembly)
	case s.Lost > 0:
		fmt.Fprintln(w, "  lost where: n/a (the kernel does not keep the counters that place a loss)")
	}
}

// writePackets writes a datagram flow's packet figures and what qualifies
// them.
func writePackets(w io.Writer, s Summary) {
	fmt.Fprintf(w, "  packets: %s fragments per message (1 = not fragmented), %s packets per message both ways; reassembly %s fragments -> %s OK, %s failed\n",
		FormatRatio(s.FragmentsPerMessage), FormatRatio(s.PacketsPerMessage), units.FormatCount(s.ReasmReqds), units.FormatCount(s.ReasmOKs), units.FormatCount(s.ReasmFails))
	if note := s.PacketsNote(); note != "" {
		fmt.Fprintf(w, "    (%s)\n", note)
	}
}

// writeCosts writes each end's CPU and what it cost per GiB and message.
func writeCosts(w io.Writer, f Flow) {
	s := f.Summary
	for _, e := range []struct {
		name string
		c    Cost
		sd   *Side
	}{{"client", s.ClientCost, f.Client}, {"agent ", s.ServerCost, f.Server}} {
		if e.sd == nil {
			continue
		}
		perGiB := units.NotAvailable // nothing delivered
		if e.c.CPUNsPerGiB > 0 {
			perGiB = fmt.Sprintf("%.0f ms", e.c.CPUNsPerGiB/1e6)
		}
		fmt.Fprintf(w, "  cpu %s %-9s user %s ms, sys %s ms (%s %% of a core), host softirq %s ms; per GiB %s cpu",
			e.name, e.sd.Role, ms(e.sd.CPU.UserNs), ms(e.sd.CPU.SystemNs), units.FormatPercent(100*e.c.Utilisation, 0), ms(e.sd.CPU.SoftIRQNs), perGiB)
		if e.c.CPUNsPerMsg > 0 {
			fmt.Fprintf(w, "; per message %.1f us cpu, %.1f us softirq", e.c.CPUNsPerMsg/1e3, e.c.SoftIRQNsPerMsg/1e3)
		}
		fmt.Fprintln(w)
	}
}

// writeVerdict writes the problems, the limits, an interruption and the
// loopback self-test.
func (rep Report) writeVerdict(w io.Writer) {
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "FAILED: %s %s: %s\n", p.Direction, p.Problem, termtext.Clean(p.Detail))
	}
	for _, l := range rep.LimitedBy {
		fmt.Fprintf(w, "WARNING: limited by %s: %s\n", l.Limit, termtext.Clean(l.Detail))
	}
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: the figures cover the time until then")
	}
	if st := rep.SelfTest; st != nil {
		// Data only: on loopback the same wake-ups happen as on the path
		// (the split above places them), so it is no floor to subtract.
		if st.RTT != nil {
			fmt.Fprintf(w, "loopback self-test: the same blocks in this process over 127.0.0.1: round trip p50 %s, p99 %s (%.0f/s in %s)\n",
				us(st.RTT.P50), us(st.RTT.P99), st.PerSec, time.Duration(st.Duration))
		} else {
			fmt.Fprintf(w, "loopback self-test: not measured (%s)\n", st.Error)
		}
	}
}

// writeModeText writes a flow's mode-specific lines: retransmits and
// streams, datagrams, or blocks and their round trips.
func writeModeText(w io.Writer, mode Mode, f Flow) {
	s := f.Summary
	switch mode {
	case ModeTCP:
		fmt.Fprintf(w, "  retransmits %d", s.Retransmits)
		snd := sender(f)
		if snd != nil {
			for i, st := range snd.Streams {
				fmt.Fprintf(w, "; stream %d: %s written, rtt %s (min %s), mss %d", i, units.FormatBytes(float64(st.Bytes)), us(st.RTT), usOf(st.MinRTT), st.MSS)
			}
		}
		fmt.Fprintln(w)
		if snd != nil && snd.Bytes > s.Bytes {
			fmt.Fprintf(w, "  the sender wrote %s, the receiver got %s: the rest was still in socket buffers or on the way when the run ended\n",
				units.FormatBytes(float64(snd.Bytes)), units.FormatBytes(float64(s.Bytes)))
		}
	case ModeUDP:
		fmt.Fprintf(w, "  datagrams: sent %d, delivered %d, lost %d (%.3f %%), reordered %d, duplicates %d, jitter %s\n",
			s.Sent, s.Messages, s.Lost, s.LossPercent, s.Reordered, s.Duplicates, us(s.Jitter))
		if s.Truncated > 0 {
			fmt.Fprintf(w, "  truncated: %d datagrams read short, holding %d of those sent: neither delivered nor lost (not network loss)\n", s.Truncated, s.Joined)
		}
		if snd := sender(f); snd != nil && snd.UDP != nil && snd.UDP.NoGSO != "" {
			fmt.Fprintf(w, "  sent one datagram per send (no UDP segmentation offload): %s\n", termtext.Clean(snd.UDP.NoGSO))
		}
		if s.Flow != nil {
			writeFlow(w, s.Flow)
		}
	case ModeBlocks:
		fmt.Fprintf(w, "  blocks: %d = %.0f blocks/s, lost %d (%.3f %%)", s.Messages, s.PerSec, s.Lost, s.LossPercent)
		if s.Chunks > 1 {
			fmt.Fprintf(w, ", each block split into %d datagrams (a UDP datagram holds at most 64 KiB)", s.Chunks)
		}
		fmt.Fprintln(w)
		if s.Truncated > 0 {
			fmt.Fprintf(w, "  truncated: %d datagrams read short (larger than any of the run): their blocks are lost at the end, not in the network\n", s.Truncated)
		}
		if p := s.RTT; p != nil {
			fmt.Fprintf(w, "  round trip: min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s",
				us(p.Min), us(p.P50), us(p.P90), us(p.P99), us(p.P999), us(p.Max))
			if s.RTTPaced {
				fmt.Fprint(w, "  (PACED by the agent's send limit: not the path's latency)")
			}
			fmt.Fprintln(w)
		}
		writeSplit(w, s)
	}
}

// writeFlow writes a flow-controlled run's window and its bottleneck.
func writeFlow(w io.Writer, f *FlowSummary) {
	fmt.Fprintf(w, "  flow control: window %d datagrams", f.Window)
	if f.ReceiveBufferBytes > 0 {
		fmt.Fprintf(w, " (from the receiver's %s socket buffer)", units.FormatBytes(float64(f.ReceiveBufferBytes)))
	}
	fmt.Fprintf(w, ", %d feedback, %d probes; the sender waited on the window %s %% of the run", f.Feedback, f.Probes, units.FormatPercent(f.WaitPercent, 1))
	switch f.Bottleneck {
	case BottleneckReceiver:
		fmt.Fprint(w, ": the receiver was the bottleneck")
	case BottleneckSender:
		fmt.Fprint(w, ": the sender was the bottleneck (the receiver kept up)")
	}
	fmt.Fprintln(w)
	if f.Abandoned != "" {
		fmt.Fprintf(w, "  flow control abandoned: %s\n", termtext.Clean(f.Abandoned))
	}
}

func ms(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e6) }

func sender(f Flow) *Side {
	for _, sd := range []*Side{f.Client, f.Server} {
		if sd != nil && sd.Role == RoleSender {
			return sd
		}
	}
	return nil
}

// PacketsNote qualifies the packet figures read from the kernel's
// counters, for the text and the HTML alike: other traffic in them (the
// figures are n/a), or both ends in one namespace; "" when neither.
func (s Summary) PacketsNote() string {
	switch {
	case s.ForeignUDP > 0:
		return fmt.Sprintf("fragments and packets n/a: %d UDP datagrams not of this run left the namespace(s) during it, other traffic the counters hold too", s.ForeignUDP)
	case s.SharedNetns && s.PacketsPerMessage > 0: // the figures the note qualifies
		return "both ends ran in one network namespace, whose counters hold both ends' packets: fragments leave out the other end's datagrams, packets count once"
	}
	return ""
}
