package gc

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// WriteHeader writes the line that says what runs, and returns the write's
// error.
func WriteHeader(w io.Writer, spec Spec, nodes int) error {
	s, _ := spec.Normalize()
	skew := "uniform"
	if s.Skew > 0 {
		skew = fmt.Sprintf("zipf %g", s.Skew)
	}
	pace := ""
	if s.RatePerSec > 0 {
		pace = fmt.Sprintf(" at %g requests/s", s.RatePerSec)
	}
	_, err := fmt.Fprintf(w, "interlink bench --mode gc: %d nodes, %s blocks, %d B requests, %d blocks (%s), %.0f %% current, %d in flight per node%s, %v; a block is lost after %v\n",
		nodes, units.FormatBytes(float64(s.Block)), s.Request, s.Blocks, skew, 100*s.CurrentShare, s.Outstanding, pace, s.Duration, s.Timeout)
	return err
}

// msf shows ns as ms with three decimals, as AWR shows its times.
func msf(ns float64) string { return fmt.Sprintf("%.3f", ns/1e6) }

func lat(l *latency.Summary) []string {
	if l == nil {
		return []string{"-", "-", "-", "-"}
	}
	return []string{msf(l.Mean), msf(float64(l.P50)), msf(float64(l.P99)), msf(float64(l.Max))}
}

func row(w io.Writer, cells ...string) { fmt.Fprintln(w, strings.Join(cells, "\t")+"\t") }

// WriteText writes the report for a person: transfers per pair, nodes,
// AWR's wait events and ping table, lost blocks, the verdict. It returns
// the first write error.
func (r *Report) WriteText(w io.Writer) error {
	ew := textout.New(w)
	if v := r.wakeVerdict(); v != "" {
		fmt.Fprintln(ew, v)
	}
	r.writeTotal(ew)
	r.writePairs(ew)
	r.writeSplits(ew)
	r.writeNodes(ew)
	r.writeEvents(ew)
	if len(r.Pings) > 0 {
		fmt.Fprintln(ew, "\nInterconnect Ping Latency Stats (AWR form; ms, measured while the workload ran):")
		WritePings(ew, "", r.Pings)
	}
	r.writeLost(ew)
	r.writeVerdict(ew)
	return ew.Err()
}

func (r *Report) writeTotal(w io.Writer) {
	t := r.Total
	fmt.Fprintf(w, "%.0f blocks/s received in all; %d requested, %d received, %d lost, %d local hits; %s %% of blocks took 3 hops\n",
		t.BlocksPerSec, t.Requested, t.Received, t.Lost, t.LocalHits, units.FormatPercent(t.ThreeWayPercent, 1))
	for _, e := range []struct {
		name string
		l    *latency.Summary
	}{{"2-way", t.TwoWay}, {"3-way", t.ThreeWay}} {
		if e.l != nil {
			fmt.Fprintf(w, "  %s receive time: mean %s ms, p50 %s, p99 %s, max %s (%d blocks)\n", e.name, msf(e.l.Mean), msf(float64(e.l.P50)), msf(float64(e.l.P99)), msf(float64(e.l.Max)), e.l.Count)
		}
	}
	fmt.Fprintf(w, "  cost per block received: %.1f us cpu (user %.1f, system %.1f), %.1f us softirq; %s fragments per block shipped, %s packets sent per block\n",
		t.CPUNsPerBlock/1e3, t.CPUPerBlock.UserNs/1e3, t.CPUPerBlock.SystemNs/1e3, t.CPUPerBlock.SoftIRQNs/1e3, traffic.FormatRatio(t.FragmentsPerBlock), traffic.FormatRatio(t.PacketsPerBlock))
}

func (r *Report) writePairs(w io.Writer) {
	fmt.Fprintln(w, "\nBlock transfers, requester <- server (receive times in ms: mean, p50, p99, max):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row(tw, "requester", "server", "blocks/s", "requested", "received", "lost", "2-way mean", "p50", "p99", "max", "3-way mean", "p50", "p99", "max")
	for _, p := range r.Pairs {
		cells := []string{termtext.Clean(p.Requester), termtext.Clean(p.Server), fmt.Sprintf("%.0f", p.BlocksPerSec), fmt.Sprint(p.Requested), fmt.Sprint(p.Received), fmt.Sprint(p.Lost)}
		cells = append(cells, lat(p.TwoWay)...)
		row(tw, append(cells, lat(p.ThreeWay)...)...)
	}
	tw.Flush()
	if lost := r.lostResults(); len(lost) > 0 {
		fmt.Fprintf(w, "  requested counts leave out the requests that %s routed as masters (results lost)\n", termtext.Clean(strings.Join(lost, ", ")))
	}
}

func (r *Report) writeNodes(w io.Writer) {
	fmt.Fprintln(w, "\nNodes (cpu and packets per block received; fragments per block shipped):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row(tw, "node", "MTU", "received/s", "served", "local", "lost", "user us", "sys us", "softirq us", "frags/block", "packets/block")
	shared, sharedNS := 0, 0
	for _, n := range r.Nodes {
		soft := fmt.Sprintf("%.1f", n.CPUPerBlock.SoftIRQNs/1e3)
		if n.SharedHost > 1 {
			soft += "*"
			if shared == 0 {
				shared = n.SharedHost // the first: one host's note
			}
		}
		frags, pkts := traffic.FormatRatio(n.FragmentsPerBlock), traffic.FormatRatio(n.PacketsPerBlock)
		if n.SharedNetns > 1 {
			frags, pkts = frags+"+", pkts+"+"
			sharedNS = max(sharedNS, n.SharedNetns)
		}
		row(tw, termtext.Clean(n.Name), mtuText(n.MTU), fmt.Sprintf("%.0f", n.BlocksPerSec), fmt.Sprint(n.Served), fmt.Sprint(n.LocalHits), fmt.Sprint(n.Lost),
			fmt.Sprintf("%.1f", n.CPUPerBlock.UserNs/1e3), fmt.Sprintf("%.1f", n.CPUPerBlock.SystemNs/1e3), soft, frags, pkts)
	}
	tw.Flush()
	if shared > 1 {
		fmt.Fprintf(w, "  * %d nodes share one host: each sees the host's whole softirq time (the total counts it once)\n", shared)
	}
	if sharedNS > 1 {
		fmt.Fprintf(w, "  + %d nodes share one network namespace, whose counters hold all their packets: the figures are the namespace's, over their blocks\n", sharedNS)
	}
	for _, n := range r.Nodes {
		if n.ForeignUDP > 0 {
			fmt.Fprintf(w, "  %s: packets n/a: %d UDP datagrams not of this run left its network namespace during it (other traffic its counters hold too)\n", termtext.Clean(n.Name), n.ForeignUDP)
		}
	}
}

// mtuText is an MTU, or "n/a" when the agent could not name one.
func mtuText(mtu int) string {
	if mtu <= 0 {
		return "n/a"
	}
	return fmt.Sprint(mtu)
}

func (r *Report) writeEvents(w io.Writer) {
	fmt.Fprintln(w, "\nGlobal cache wait events (AWR form; avg ms):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row(tw, "node", "event", "waits", "avg ms")
	for _, n := range r.Nodes {
		for _, e := range n.Events {
			if e.Waits > 0 {
				row(tw, termtext.Clean(n.Name), e.Event, fmt.Sprint(e.Waits), msf(e.AvgNs))
			}
		}
	}
	tw.Flush()
}

// writeLost says where the lost blocks went: by the receiving node's
// kernel, then the pairs' losses that never reached a server.
func (r *Report) writeLost(w io.Writer) {
	first := true
	for _, n := range r.Nodes {
		if n.LostWhere == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nLost blocks, where the receiving node's kernel saw them go:")
			first = false
		}
		lw := n.LostWhere
		fmt.Fprintf(w, "  %s: %d nothing seen (lost before this node), %d receive buffer full, %d reassembly failed", termtext.Clean(n.Name), lw.NothingSeen, lw.ReceiveBuffer, lw.Reassembly)
		if lw.Truncated > 0 {
			fmt.Fprintf(w, ", %d with a datagram read short (truncated: not network loss)", lw.Truncated)
		}
		fmt.Fprintln(w)
	}
	for _, p := range r.Pairs {
		if l := p.LostBy; l.Request+l.Unconfirmed+l.NoPath > 0 {
			fmt.Fprintf(w, "  %s <- %s: %d requests never reached the master, %d unconfirmed (the master did not answer), %d never sent (no path)\n",
				termtext.Clean(p.Requester), termtext.Clean(p.Server), l.Request, l.Unconfirmed, l.NoPath)
		}
	}
}

// writeVerdict writes the nodes that took no part, the problems, the
// limits and the verdict.
func (r *Report) writeVerdict(w io.Writer) {
	if len(r.Unreachable) > 0 {
		fmt.Fprintln(w)
		for _, u := range r.Unreachable {
			when := "not measured"
			if u.During {
				when = "its result was lost"
			}
			fmt.Fprintf(w, "UNREACHABLE: %s (%s): %s; %s\n", termtext.Clean(u.Node), termtext.Clean(u.Agent), termtext.Clean(u.Cause), when)
		}
	}
	for _, p := range r.Problems {
		tag := "WARNING"
		if p.Critical {
			tag = "FAILED"
		}
		fmt.Fprintf(w, "%s: %s: %s\n", tag, p.Problem, termtext.Clean(p.Detail))
	}
	for _, l := range r.LimitedBy {
		fmt.Fprintf(w, "WARNING: limited: %s\n", termtext.Clean(l))
	}
	if r.Interrupted {
		fmt.Fprintln(w, "interrupted: the figures cover the time until then")
	}
	fmt.Fprintf(w, "verdict: %s\n", r.Verdict)
}

// WritePings writes AWR's "Interconnect Ping Latency Stats" table, each
// line after indent: 500 B and 8 KiB count, average and standard deviation
// in ms, and the pings that never came back.
func WritePings(w io.Writer, indent string, pings []PingRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row(tw, indent+"node", "target", "500B count", "avg 500B", "stddev 500B", "8K count", "avg 8K", "stddev 8K", "lost")
	for _, p := range pings {
		sa, ss := p.Small.Times()
		la, ls := p.Large.Times()
		row(tw, indent+termtext.Clean(p.Node), termtext.Clean(p.Target), fmt.Sprint(p.Small.Count), sa, ss,
			fmt.Sprint(p.Large.Count), la, ls, fmt.Sprint(p.Small.Lost+p.Large.Lost))
	}
	tw.Flush()
}
