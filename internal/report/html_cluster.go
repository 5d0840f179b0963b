package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/traffic"
)

// clusterSections renders a cluster run: the nodes (how each was reached,
// what ran, what was left), the mesh heatmap, the bench pairs, then each
// node's check with its findings, evidence and fixes.
func clusterSections(r *cluster.Result) []section {
	out := []section{clusterNodesSection(r)}
	if r.Mesh != nil {
		out = append(out, meshSection(r.Mesh, fmt.Sprintf("mesh: path MTU between %d nodes", len(r.Mesh.Nodes))))
	} else {
		ms := section{Kind: "mesh", Title: "mesh: not run", Status: "unknown", Badge: "not run"}
		ms.para("The mesh did not run: %s.", r.MeshSkipped)
		out = append(out, ms)
	}
	if r.Bench != nil {
		out = append(out, clusterBenchSection(r.Bench))
	}
	if r.GC != nil {
		out = append(out, clusterGCSection(r.GC))
	}
	for _, n := range r.Nodes {
		if n.Check != nil {
			out = append(out, checkSection(n.Check, "check: "+n.Name))
		}
	}
	return out
}

// clusterNodesSection renders the run and its nodes: how the nodes were
// found, one row per node, and the nodes not fully covered.
func clusterNodesSection(r *cluster.Result) section {
	c := r.Counts()
	s := section{Kind: "cluster", Title: fmt.Sprintf("cluster: %d nodes", len(r.Nodes))}
	switch {
	case r.Stopped != "":
		s.Status, s.Badge = "unknown", "stopped early"
	case c[cluster.StatusOK] < len(r.Nodes):
		s.Status, s.Badge = "unknown", fmt.Sprintf("%d of %d nodes ok", c[cluster.StatusOK], len(r.Nodes))
	default:
		s.Status, s.Badge = "ok", "every node reached"
	}
	s.para("%d nodes, %s, at most %d set up at once; the mesh ran from %s.", len(r.Nodes), r.Elapsed.Round(time.Millisecond), r.Parallel, r.MeshFrom)
	if r.Stopped != "" {
		s.note("Stopped early: %s; every node was cleaned up.", r.Stopped)
	}
	if cw := r.Clusterware; cw != nil {
		var nets []string
		for _, n := range cw.Networks {
			nets = append(nets, n.Adapter+"/"+n.Subnet)
		}
		s.para("Nodes from Oracle Clusterware (grid home %s): %s, from %s. Interconnect networks %s (from %s); each node's addresses on them were found on the node.",
			cw.GridHome, strings.Join(cw.Nodes, ", "), cw.NodesFrom, orDash(strings.Join(nets, ", ")), cw.NetworksFrom)
		s.list(cw.Notes)
	}
	t := &table{Head: []string{"node", "ssh", "status", "interconnect", "binary", "check", "critical", "warning", "left on node"}}
	var problems []string
	for _, n := range r.Nodes {
		t.Rows = append(t.Rows, clusterNodeRow(n))
		for _, l := range append(append([]string{n.Error}, n.CheckError), n.Notes...) {
			if l != "" {
				problems = append(problems, n.Name+": "+l)
			}
		}
	}
	s.table(t)
	if len(problems) > 0 {
		s.heading("Nodes not fully covered")
		s.list(problems)
	}
	return s
}

// clusterNodeRow is a node's row: how SSH reached it, its status, its
// interconnect, the binary, its check and what was left on it.
func clusterNodeRow(n cluster.NodeResult) []cell {
	st := cell{Text: n.Status, Class: "ok"}
	if n.Status != cluster.StatusOK {
		st = cell{Text: n.Status + " (" + n.Cause + ")", Class: "critical"}
	}
	var ic []string
	for _, a := range n.Interconnect {
		ic = append(ic, a.String())
	}
	chk, crit, warn := cell{Text: "-"}, cell{Text: "-", Class: "num"}, cell{Text: "-", Class: "num"}
	if n.Check != nil {
		sm := n.Check.Summary
		chk = cell{Text: sm.Status, Class: statusClass(sm.Status)}
		crit.Text, warn.Text = fmt.Sprint(sm.Critical), fmt.Sprint(sm.Warning)
	} else if n.CheckError != "" {
		chk = cell{Text: "could not run", Class: "unknown"}
	}
	left := cell{Text: "nothing", Class: "ok"}
	switch {
	case n.Cleanup.Error != "":
		left = cell{Text: "MAYBE: " + n.Cleanup.Error, Class: "critical"}
	case n.Cleanup.Removed != "":
		left.Text = "nothing (removed " + n.Cleanup.Removed + ")"
	}
	return []cell{{Text: n.Name}, {Text: fmt.Sprintf("%s@%s:%d", n.User, n.HostName, n.Port)}, st,
		{Text: orDash(strings.Join(ic, " "))}, {Text: orDash(n.Binary)}, chk, crit, warn, left}
}

// clusterBenchSection renders the bench pairs as one table, with each
// pair's limits and problems below it.
func clusterBenchSection(b *cluster.Bench) section {
	s := section{Kind: "bench", Title: fmt.Sprintf("bench %s: each node to the next, %s per pair", b.Mode, b.Time)}
	if b.Skipped != "" {
		s.Status, s.Badge = "unknown", "not run"
		s.para("No pair ran: %s.", b.Skipped)
		return s
	}
	s.para("Run on %s, one pair at a time.", b.From)
	worst := "ok"
	rank := map[string]int{"ok": 0, "warning": 1, "unknown": 2, "critical": 3}
	t := &table{Head: []string{"from", "to", "network", "path", "verdict", "result", "limited by"}}
	var notes []string
	for _, p := range b.Pairs {
		v, res, lim := cell{Text: "error", Class: "unknown"}, p.Error, "-"
		if sm := p.Summary(); sm != nil {
			v.Text = p.Report.Verdict
			switch p.Report.Verdict {
			case traffic.VerdictOK:
				v.Class = "ok"
			case traffic.VerdictLimited:
				v.Class = "warning"
			default:
				v.Class = "critical"
			}
			res = cluster.BenchFigures(b.Mode, sm)
			var ls []string
			for _, l := range p.Report.LimitedBy {
				ls = append(ls, l.Limit)
				notes = append(notes, fmt.Sprintf("%s -> %s: limited by %s: %s", p.From, p.To, l.Limit, l.Detail))
			}
			for _, pr := range p.Report.Problems {
				notes = append(notes, fmt.Sprintf("%s -> %s: %s: %s", p.From, p.To, pr.Problem, pr.Detail))
			}
			if len(ls) > 0 {
				lim = strings.Join(ls, ", ")
			}
		}
		if rank[v.Class] > rank[worst] {
			worst = v.Class
		}
		t.Rows = append(t.Rows, []cell{{Text: p.From}, {Text: p.To}, {Text: fmt.Sprint(p.Network), Class: "num"},
			{Text: p.FromAddr.String() + " -> " + p.ToAddr.String()}, v, {Text: res}, {Text: lim}})
	}
	s.Status, s.Badge = worst, fmt.Sprintf("%d pairs", len(b.Pairs))
	s.table(t)
	s.list(notes)
	return s
}

// clusterGCSection renders the cluster's gc workload as bench --mode gc's
// own section, headed by where it ran and on which network.
func clusterGCSection(g *cluster.GC) section {
	var notRun []string
	for _, n := range g.NotRun {
		notRun = append(notRun, "not in the run: "+n)
	}
	if g.Report == nil {
		s := section{Kind: "gc", Title: "bench gc: not run", Status: "unknown", Badge: "not run"}
		why := g.Skipped
		if why == "" {
			why = g.Error
		}
		s.para("The gc workload did not run: %s.", why)
		s.list(notRun)
		return s
	}
	s := gcSection(g.Report)
	s.Title = fmt.Sprintf("bench gc: %d nodes at once, interconnect network %d", len(g.Report.Nodes), g.Network)
	var addrs []string
	for _, n := range slices.Sorted(maps.Keys(g.Addrs)) {
		addrs = append(addrs, n+" "+g.Addrs[n])
	}
	head := []block{{Para: fmt.Sprintf("Run from %s %s, for %s; the blocks crossed interconnect network %d: %s.",
		g.Node, g.From, g.Time, g.Network, strings.Join(addrs, ", "))}}
	if len(notRun) > 0 {
		head = append(head, block{List: notRun})
		if s.Status == "ok" {
			s.Status, s.Badge = "unknown", fmt.Sprintf("%d node(s) not in the run", len(notRun))
		}
	}
	if g.Error != "" {
		head = append(head, block{Note: g.Error})
	}
	s.Blocks = append(head, s.Blocks...)
	return s
}
