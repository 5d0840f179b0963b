package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"time"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// gcSection renders a bench --mode gc run: what ran and what it moved,
// heatmaps per pair (blocks/s, 2-way and 3-way median receive time, lost
// blocks), then the tables: pairs, nodes, AWR's wait events and its
// "Interconnect Ping Latency Stats".
func gcSection(r *gc.Report) section {
	s := section{Kind: "gc", Title: fmt.Sprintf("bench --mode gc: %d nodes", len(r.Nodes))}
	s.Status, s.Badge = gcStatus(r)
	gcSummary(&s, r)
	cpuLatencyBlock(&s, r.CPULatency)
	gcHeatmaps(&s, r)
	s.heading("Block transfers per pair")
	s.table(gcPairTable(r))
	gcSplitSection(&s, r)
	s.heading("Nodes")
	s.table(gcNodeTable(r))
	gcAWRTables(&s, r)
	var problems []string
	for _, p := range r.Problems {
		problems = append(problems, p.Problem+": "+p.Detail)
	}
	problems = append(problems, r.LimitedBy...)
	if len(problems) > 0 {
		s.heading("Problems")
		s.list(problems)
	}
	if r.Interrupted {
		s.note("Interrupted: the figures cover the time until then.")
	}
	return s
}

// gcStatus is the section's status and badge: the verdict, or why the
// run has none.
func gcStatus(r *gc.Report) (status, badge string) {
	switch {
	case r.Verdict == gc.VerdictFailed:
		return "critical", "failed"
	case r.Interrupted:
		return "unknown", "interrupted"
	case len(r.Unreachable) > 0:
		return "unknown", fmt.Sprintf("%d node(s) unreachable", len(r.Unreachable))
	case r.Verdict == gc.VerdictOK:
		return "ok", "ok"
	default:
		return "warning", r.Verdict
	}
}

// gcSummary writes the workload, the totals and the unreachable nodes.
func gcSummary(s *section, r *gc.Report) {
	sp, t := r.Spec, r.Total
	skew := "uniform"
	if sp.Skew > 0 {
		skew = fmt.Sprintf("zipf %g", sp.Skew)
	}
	s.para("Cache Fusion across %d nodes for %s: %s blocks, %d B requests, a working set of %d blocks (%s), %.0f %% current mode, %d in flight per node; a block not whole within %s is lost.",
		len(r.Nodes), sp.Duration, units.FormatBytes(float64(sp.Block)), sp.Request, sp.Blocks, skew, 100*sp.CurrentShare, sp.Outstanding, sp.Timeout)
	if !r.Start.IsZero() {
		s.note("Started %s.", r.Start.Format(time.RFC3339))
	}
	s.para("%.0f blocks/s received in all: %d requested, %d received, %d lost, %d local hits; %s %% of the blocks took 3 hops. Per block received: %.1f us cpu, %.1f us softirq; %s IP packets per block shipped.",
		t.BlocksPerSec, t.Requested, t.Received, t.Lost, t.LocalHits, units.FormatPercent(t.ThreeWayPercent, 1), t.CPUNsPerBlock/1e3, t.CPUPerBlock.SoftIRQNs/1e3, traffic.FormatRatio(t.FragmentsPerBlock))
	if len(r.Unreachable) > 0 {
		u := &table{Head: []string{"node", "agent", "cause", "error"}}
		for _, n := range r.Unreachable {
			u.Rows = append(u.Rows, row(n.Node, n.Agent, n.Cause, n.Error))
		}
		s.heading("Unreachable nodes")
		s.table(u)
	}
}

// gcHeatmaps draws the per-pair heatmaps (rate, 2-way and 3-way median
// receive time, lost blocks) when there are nodes, at most heatmapMax.
func gcHeatmaps(s *section, r *gc.Report) {
	var names []string
	for _, n := range r.Nodes {
		names = append(names, n.Name)
	}
	pairs := map[[2]string]gc.Pair{}
	maxRate, maxLat := 0.0, 0.0
	for _, p := range r.Pairs {
		pairs[[2]string{p.Requester, p.Server}] = p
		maxRate = max(maxRate, p.BlocksPerSec)
		for _, l := range []*latency.Summary{p.TwoWay, p.ThreeWay} {
			if l != nil {
				maxLat = max(maxLat, float64(l.P50))
			}
		}
	}
	if len(names) == 0 || len(names) > heatmapMax {
		return
	}
	get := func(f func(p gc.Pair) (float64, bool)) func(i, j int) (float64, bool) {
		return func(i, j int) (float64, bool) {
			p, ok := pairs[[2]string{names[i], names[j]}]
			if !ok {
				return 0, false
			}
			return f(p)
		}
	}
	rate := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	ms := func(v float64) string { return fmt.Sprintf("%.3f", v/1e6) }
	p50 := func(l *latency.Summary) (float64, bool) {
		if l == nil {
			return 0, false
		}
		return float64(l.P50), true
	}
	s.chart("Blocks received per second, requester (row) from server (column).",
		gcHeatmap("gc-rate", "blocks per second per pair", names, get(func(p gc.Pair) (float64, bool) { return p.BlocksPerSec, true }), rate, scale("#e3f2fd", "#1565c0", maxRate)))
	s.chart("2-way receive time, median in ms: the master shipped the block.",
		gcHeatmap("gc-2way", "2-way median receive time per pair", names, get(func(p gc.Pair) (float64, bool) { return p50(p.TwoWay) }), ms, scale("#fff3e0", "#e65100", maxLat)))
	if r.Total.ThreeWay != nil {
		s.chart("3-way receive time, median in ms: the master forwarded the request to the holder, which shipped the block.",
			gcHeatmap("gc-3way", "3-way median receive time per pair", names, get(func(p gc.Pair) (float64, bool) { return p50(p.ThreeWay) }), ms, scale("#fff3e0", "#e65100", maxLat)))
	} else {
		s.note("No block arrived in 3 hops (with 2 nodes there is no third to hold one; on a failing path none may arrive at all).")
	}
	s.chart("Lost blocks: not whole within the timeout, counted on the pair that was to carry them.",
		gcHeatmap("gc-lost", "lost blocks per pair", names, get(func(p gc.Pair) (float64, bool) { return float64(p.Lost), true }), rate, lostColor))
}

// gcPairTable is the block transfers of each requester from each server.
func gcPairTable(r *gc.Report) *table {
	pt := &table{Head: []string{"requester", "server", "blocks/s", "requested", "received", "lost", "2-way mean / p50 / p99 / max ms", "3-way mean / p50 / p99 / max ms"}}
	for _, p := range r.Pairs {
		lost := cell{Text: strconv.FormatInt(p.Lost, 10), Class: "num ok"}
		if p.Lost > 0 {
			lost.Class = "num critical"
		}
		pt.Rows = append(pt.Rows, []cell{{Text: p.Requester}, {Text: p.Server}, {Text: fmt.Sprintf("%.0f", p.BlocksPerSec), Class: "num"},
			{Text: strconv.FormatInt(p.Requested, 10), Class: "num"}, {Text: strconv.FormatInt(p.Received, 10), Class: "num"}, lost,
			{Text: latText(p.TwoWay)}, {Text: latText(p.ThreeWay)}})
	}
	return pt
}

// gcNodeTable is each node's figures, and where its lost blocks went.
func gcNodeTable(r *gc.Report) *table {
	nt := &table{Head: []string{"node", "MTU", "received/s", "served", "local hits", "lost", "cpu per block (user / system / softirq us)", "fragments per block", "packets per block", "lost where"}}
	for _, n := range r.Nodes {
		where := "-"
		if w := n.LostWhere; w != nil {
			where = fmt.Sprintf("nothing seen %d, receive buffer %d, reassembly %d", w.NothingSeen, w.ReceiveBuffer, w.Reassembly)
		}
		if n.Error != "" {
			where = n.Error
		}
		soft := fmt.Sprintf("%.1f", n.CPUPerBlock.SoftIRQNs/1e3)
		if n.SharedHost > 1 {
			soft += fmt.Sprintf(" (host shared by %d nodes)", n.SharedHost)
		}
		ns := ""
		if n.SharedNetns > 1 { // the namespace's counters: its figure, over its nodes' blocks
			ns = fmt.Sprintf(" (network namespace shared by %d nodes)", n.SharedNetns)
		}
		if n.ForeignUDP > 0 {
			ns = fmt.Sprintf(" (%d UDP datagrams not of this run in its namespace's counters)", n.ForeignUDP)
		}
		nt.Rows = append(nt.Rows, []cell{{Text: n.Name}, {Text: mtuText(n.MTU), Class: "num"}, {Text: fmt.Sprintf("%.0f", n.BlocksPerSec), Class: "num"},
			{Text: strconv.FormatInt(n.Served, 10), Class: "num"}, {Text: strconv.FormatInt(n.LocalHits, 10), Class: "num"}, {Text: strconv.FormatInt(n.Lost, 10), Class: "num"},
			{Text: fmt.Sprintf("%.1f / %.1f / %s", n.CPUPerBlock.UserNs/1e3, n.CPUPerBlock.SystemNs/1e3, soft)},
			{Text: traffic.FormatRatio(n.FragmentsPerBlock) + ns, Class: "num"}, {Text: traffic.FormatRatio(n.PacketsPerBlock) + ns, Class: "num"}, {Text: where}})
	}
	return nt
}

// gcAWRTables writes the wait events and ping latencies as AWR shows
// them.
func gcAWRTables(s *section, r *gc.Report) {
	et := &table{Head: []string{"node", "event", "waits", "avg wait (ms)"}}
	for _, n := range r.Nodes {
		for _, e := range n.Events {
			if e.Waits > 0 {
				et.Rows = append(et.Rows, []cell{{Text: n.Name}, {Text: e.Event}, {Text: strconv.FormatInt(e.Waits, 10), Class: "num"}, {Text: fmt.Sprintf("%.3f", e.AvgNs/1e6), Class: "num"}})
			}
		}
	}
	s.heading("Global cache wait events (as AWR shows them)")
	s.table(et)
	if len(r.Pings) > 0 {
		pg := &table{Head: []string{"node", "target", "500B ping count", "avg latency 500B (ms)", "stddev 500B (ms)", "8K ping count", "avg latency 8K (ms)", "stddev 8K (ms)", "lost"}}
		for _, p := range r.Pings {
			sa, ss := p.Small.Times()
			la, ls := p.Large.Times()
			pg.Rows = append(pg.Rows, []cell{{Text: p.Node}, {Text: p.Target}, {Text: strconv.FormatInt(p.Small.Count, 10), Class: "num"},
				{Text: sa, Class: "num"}, {Text: ss, Class: "num"},
				{Text: strconv.FormatInt(p.Large.Count, 10), Class: "num"}, {Text: la, Class: "num"},
				{Text: ls, Class: "num"}, {Text: strconv.FormatInt(p.Small.Lost+p.Large.Lost, 10), Class: "num"}})
		}
		s.heading("Interconnect Ping Latency Stats (as AWR shows them; measured while the workload ran)")
		s.table(pg)
	}
}

func latText(l *latency.Summary) string {
	if l == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f / %.3f / %.3f / %.3f", l.Mean/1e6, float64(l.P50)/1e6, float64(l.P99)/1e6, float64(l.Max)/1e6)
}

// scale returns a colour between lo and hi (#rrggbb) for v in [0, top].
func scale(lo, hi string, top float64) func(float64) string {
	parse := func(c string) [3]float64 {
		var r, g, b int
		fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b)
		return [3]float64{float64(r), float64(g), float64(b)}
	}
	a, b := parse(lo), parse(hi)
	return func(v float64) string {
		f := 0.0
		if top > 0 {
			f = math.Max(0, math.Min(1, v/top))
		}
		return fmt.Sprintf("#%02x%02x%02x", int(a[0]+(b[0]-a[0])*f), int(a[1]+(b[1]-a[1])*f), int(a[2]+(b[2]-a[2])*f))
	}
}

func lostColor(v float64) string {
	if v == 0 {
		return styleOK.fill
	}
	return styleHole.fill
}

// gcHeatmap draws one figure per ordered pair, requester (row) by server
// (column), coloured by value, labelled when the cells are large enough,
// every cell with its value as a tooltip.
func gcHeatmap(class, label string, names []string, cell func(i, j int) (float64, bool), text func(float64) string, color func(float64) string) template.HTML {
	n := float64(len(names))
	size := min(64, max(8, 600/n))
	labelW, top := 90.0, 70.0
	w := max(labelW+size*n+10, 320)
	h := top + size*n + 12
	s := newSVG(w, h, "heatmap "+class, label)
	showText := size >= 36
	for j, to := range names {
		if size >= 14 {
			s.text(labelW+size*float64(j)+size/2, top-8, "middle", "tick", shorten(to, int(size/6.5)))
		}
	}
	s.text(labelW+size*n/2, top-30, "middle", "axis", "server")
	s.text(6, top-8, "start", "axis", "requester")
	for i, from := range names {
		y := top + size*float64(i)
		if size >= 12 {
			s.text(labelW-6, y+size/2+4, "end", "tick", shorten(from, 13))
		}
		for j, to := range names {
			x := labelW + size*float64(j)
			v, ok := cell(i, j)
			if i == j || !ok {
				s.rect(x+1, y+1, size-2, size-2, "#f5f5f5", "", "")
				continue
			}
			s.rect(x+1, y+1, size-2, size-2, color(v), "", fmt.Sprintf("%s <- %s: %s", from, to, text(v)))
			if showText {
				s.text(x+size/2, y+size/2+4, "middle", "cell", text(v))
			}
		}
	}
	return s.html()
}

// mtuText is an MTU, or "-" when there is none (no gc agent named one, no
// pmtu probe arrived, no receiver said).
func mtuText(mtu int) string {
	if mtu <= 0 {
		return "-"
	}
	return strconv.Itoa(mtu)
}
