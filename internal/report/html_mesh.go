package report

import (
	"fmt"
	"html/template"
	"strconv"
	"time"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
)

// heatmapMax bounds the nodes of one heatmap: 64 x 64 cells still read on
// a page and keep the file small. Beyond, the heatmap shows the nodes on
// problem paths (up to heatmapMax) and says so.
const heatmapMax = 64

// problemRowsMax bounds the table of problem paths (a broken switch in a
// large mesh makes thousands); the count says how many there are.
const problemRowsMax = 200

// verdictStyle is the fill and the short label of a path's state. The
// labels make the matrix readable printed in grey.
type verdictStyle struct{ fill, short, name string }

var (
	styleOK      = verdictStyle{"#a5d6a7", "ok", "ok"}
	styleLocal   = verdictStyle{"#fff59d", "local", "local-limit (own interface)"}
	styleICMP    = verdictStyle{"#ffcc80", "icmp", "icmp (a hop reported its MTU)"}
	styleHole    = verdictStyle{"#ef9a9a", "hole", "blackhole (silently dropped)"}
	styleUnreach = verdictStyle{"#b0bec5", "unr", "unreachable"}
	styleError   = verdictStyle{"#90a4ae", "err", "error (not measured)"}
	styleDown    = verdictStyle{"#cfd8dc", "down", "agent down (not tried)"}
	styleNM      = verdictStyle{"#eeeeee", "n/m", "not measured (run stopped)"}
)

func pathStyle(p mesh.Path) verdictStyle {
	switch {
	case p.Skipped == mesh.SkipUnreachable:
		return styleDown
	case p.Skipped == mesh.SkipStopped:
		return styleNM
	case p.Error != "":
		return styleError
	}
	switch p.Verdict {
	case pmtu.OK:
		return styleOK
	case pmtu.LocalLimit:
		return styleLocal
	case pmtu.ICMP:
		return styleICMP
	case pmtu.Blackhole:
		return styleHole
	default:
		return styleUnreach
	}
}

// meshSection renders a mesh: counts, one heatmap per network with the
// verdict of every cell, and the problem paths. title overrides the
// section title (the demo names its mesh).
func meshSection(r *mesh.Result, title string) section {
	tried, measured, dead, stopped := r.Counts()
	problems := 0
	for _, p := range r.Paths {
		if p.Skipped == "" && p.Problem() {
			problems++
		}
	}
	if title == "" {
		title = fmt.Sprintf("mesh: %d nodes", len(r.Nodes))
	}
	s := section{Kind: "mesh", Title: title}
	switch {
	case r.Stopped != "":
		s.Status, s.Badge = "unknown", "stopped early"
	case problems > 0:
		s.Status, s.Badge = "warning", fmt.Sprintf("%d problem paths", problems)
	default:
		s.Status, s.Badge = "ok", "no problem paths"
	}
	expect := ""
	if r.Expect > 0 {
		expect = fmt.Sprintf(", expected path MTU %d", r.Expect)
	}
	s.para("%d nodes, %d network(s), %d paths, %s%s. Paths: %d measured, %d failed, %d not tried (agent unreachable), %d not measured (run stopped).",
		len(r.Nodes), r.Networks, len(r.Paths), r.Elapsed.Round(time.Millisecond), expect, measured, tried-measured, dead, stopped)
	if sl := r.Slowest; sl != nil {
		s.para("Up to %d working pairs per node at once, %d with those waiting out probe timeouts; the slowest node, %s, spent %s in %d pairs, %s of it waiting out probe timeouts.",
			r.PerNode, r.MaxPerNode, sl.Node, sl.Spent.Round(time.Millisecond), sl.Pairs, sl.Waited.Round(time.Millisecond))
	}
	if r.Stopped != "" {
		s.note("Stopped early: %s.", r.Stopped)
	}
	if len(r.Unreachable) > 0 {
		t := &table{Head: []string{"node", "agent", "cause", "error"}}
		for _, u := range r.Unreachable {
			t.Rows = append(t.Rows, row(u.Node, u.Agent, u.Cause, u.Error))
		}
		s.heading("Unreachable agents")
		s.table(t)
	}
	nodes := r.Nodes
	if len(nodes) > heatmapMax {
		nodes = problemNodes(r)
		s.note("The mesh has %d nodes; the heatmaps show the %d nodes on problem paths (at most %d). The JSON result holds every path.",
			len(r.Nodes), len(nodes), heatmapMax)
	}
	if len(nodes) > 0 {
		for net := 1; net <= r.Networks; net++ {
			s.chart(fmt.Sprintf("Network %d: path MTU from row to column; colour and label give the verdict, a thick red border a path below the expected MTU.", net),
				heatmap(r, net, nodes))
		}
	}
	var rows [][]cell
	for _, p := range r.Paths {
		if p.Skipped != "" || !p.Problem() || len(rows) == problemRowsMax {
			continue
		}
		st := pathStyle(p)
		detail := p.Detail
		if p.Error != "" {
			detail = p.Error
		}
		rows = append(rows, []cell{{Text: p.From}, {Text: p.To}, {Text: strconv.Itoa(p.Network)}, {Text: p.FromAddr + " -> " + p.ToAddr},
			{Text: st.name, Class: "warning"}, {Text: strconv.Itoa(p.PathMTU), Class: "num"}, {Text: detail}})
	}
	if len(rows) > 0 {
		shown := ""
		if problems > len(rows) {
			shown = fmt.Sprintf("; the first %d shown, the JSON result holds every path", len(rows))
		}
		s.heading(fmt.Sprintf("Problem paths (%d of %d%s)", problems, len(r.Paths), shown))
		s.table(&table{Head: []string{"from", "to", "net", "addresses", "verdict", "path MTU", "detail"}, Rows: rows})
	}
	return s
}

// problemNodes lists the nodes on problem paths, in node order, at most
// heatmapMax.
func problemNodes(r *mesh.Result) []mesh.Node {
	on := map[string]bool{}
	for _, p := range r.Paths {
		if p.Skipped == "" && p.Problem() {
			on[p.From], on[p.To] = true, true
		}
	}
	var out []mesh.Node
	for _, n := range r.Nodes {
		if on[n.Name] && len(out) < heatmapMax {
			out = append(out, n)
		}
	}
	return out
}

// heatmap draws the from x to matrix of one network: a cell per path,
// filled by verdict, labelled with the path MTU and the verdict when the
// cells are large enough, with the details as a tooltip.
func heatmap(r *mesh.Result, network int, nodes []mesh.Node) template.HTML {
	n := float64(len(nodes))
	cellSize := min(64, max(8, 600/n))
	labelW := 90.0
	top := 70.0
	w := labelW + cellSize*n + 10
	legendH := 24.0
	h := top + cellSize*n + legendH + 16
	s := newSVG(max(w, 560), h, "heatmap mesh-heatmap", fmt.Sprintf("path MTU matrix of network %d", network))
	byKey := map[[2]string]mesh.Path{}
	for _, p := range r.Paths {
		if p.Network == network {
			byKey[[2]string{p.From, p.To}] = p
		}
	}
	showText := cellSize >= 36
	for j, to := range nodes {
		x := labelW + cellSize*float64(j) + cellSize/2
		if showText || cellSize >= 14 {
			s.text(x, top-8, "middle", "tick", shorten(to.Name, int(cellSize/6.5)))
		}
	}
	s.text(labelW+cellSize*n/2, top-30, "middle", "axis", "to")
	s.text(6, top-8, "start", "axis", "from")
	for i, from := range nodes {
		y := top + cellSize*float64(i)
		if cellSize >= 12 {
			s.text(labelW-6, y+cellSize/2+4, "end", "tick", shorten(from.Name, 13))
		}
		for j, to := range nodes {
			x := labelW + cellSize*float64(j)
			if i == j {
				s.rect(x+1, y+1, cellSize-2, cellSize-2, "#f5f5f5", "", "")
				continue
			}
			p, ok := byKey[[2]string{from.Name, to.Name}]
			heatCell(s, x, y, cellSize, from.Name, to.Name, p, ok, showText)
		}
	}
	heatLegend(s, byKey, 6.0, top+cellSize*n+16)
	return s.html()
}

// heatCell draws the cell of the path from -> to at x, y: filled by its
// verdict, outlined when it misses --expect, labelled when showText.
func heatCell(s *svg, x, y, cellSize float64, from, to string, p mesh.Path, ok, showText bool) {
	if !ok {
		s.rect(x+1, y+1, cellSize-2, cellSize-2, "#ffffff", "#eeeeee", from+" -> "+to+": no such path in the result")
		return
	}
	st := pathStyle(p)
	stroke := ""
	if p.MeetsExpect != nil && !*p.MeetsExpect {
		stroke = "#b71c1c"
	}
	tip := fmt.Sprintf("%s -> %s (%s -> %s): %s, path MTU %d", from, to, p.FromAddr, p.ToAddr, st.name, p.PathMTU)
	if p.Detail != "" {
		tip += "; " + p.Detail
	}
	if p.Error != "" {
		tip += "; " + p.Error
	}
	s.rect(x+1, y+1, cellSize-2, cellSize-2, st.fill, stroke, tip)
	if showText {
		label := st.short
		if p.Skipped == "" && p.Error == "" {
			label = strconv.Itoa(p.PathMTU)
		}
		s.text(x+cellSize/2, y+cellSize/2+1, "middle", "cell", label)
		if p.Skipped == "" && p.Error == "" {
			s.text(x+cellSize/2, y+cellSize/2+13, "middle", "cellsub", st.short)
		}
	}
}

// heatLegend draws, from lx, ly, the verdicts present in a fixed order.
func heatLegend(s *svg, byKey map[[2]string]mesh.Path, lx, ly float64) {
	seen := map[verdictStyle]bool{}
	for _, p := range byKey {
		seen[pathStyle(p)] = true
	}
	for _, st := range []verdictStyle{styleOK, styleLocal, styleICMP, styleHole, styleUnreach, styleError, styleDown, styleNM} {
		if !seen[st] {
			continue
		}
		s.rect(lx, ly, 12, 12, st.fill, "", "")
		s.text(lx+16, ly+10, "start", "legend", st.name)
		lx += 30 + 6.2*float64(len(st.name))
	}
}

// shorten cuts s to n characters with an ellipsis, for axis labels; the
// full name stays in the tooltips and tables.
func shorten(s string, n int) string {
	r := []rune(s)
	if n < 2 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
