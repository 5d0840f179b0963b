package mesh

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// The human mesh report is bounded by what fits a screen: a matrix up to
// meshMatrixMax nodes (16 columns of "9000!" fit 120 columns), otherwise
// one line per node with problems and the problem paths grouped by verdict,
// at most meshGroupMax paths per group. Unreachable nodes are listed once,
// one line each up to meshDeadLines, otherwise grouped by cause with their
// names wrapped, at most meshDeadLines lines per cause. --json has it all.
const (
	meshMatrixMax = 16
	meshGroupMax  = 10
	meshDeadLines = 8
	meshWidth     = 100
)

// WriteText writes the human mesh report: counts, unreachable agents, then
// the matrix and problem paths of a small mesh, or per-node lines and
// problem groups of a large one.
func WriteText(out io.Writer, res *Result) error {
	w := textout.New(out)
	tried, measured, skippedDead, skippedStop := res.Counts()
	expect := ""
	if res.Expect > 0 {
		expect = fmt.Sprintf(", expect %d", res.Expect)
	}
	fmt.Fprintf(w, "interlink mesh: %d nodes, %d network(s), %d paths, %s%s\n",
		len(res.Nodes), res.Networks, len(res.Paths), res.Elapsed.Round(time.Millisecond), expect)
	if s := res.Slowest; s != nil {
		fmt.Fprintf(w, "schedule: up to %d working pairs per node at once, %d with those waiting out probe timeouts; slowest node %s: %d pairs, %s of tests, %s of it waiting out probe timeouts\n",
			res.PerNode, res.MaxPerNode, termtext.Clean(s.Node), s.Pairs, s.Spent.Round(time.Millisecond), s.Waited.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "paths: %d measured, %d failed, %d not tried (agent unreachable), %d not measured (run stopped)\n",
		measured, tried-measured, skippedDead, skippedStop)
	if res.Stopped != "" {
		fmt.Fprintf(w, "STOPPED EARLY: %s; %d paths not measured (n/m)\n", termtext.Clean(res.Stopped), skippedStop)
	}
	renderUnreachable(w, res)
	if len(res.Nodes) <= meshMatrixMax {
		renderMatrix(w, res)
		renderProblemList(w, res)
		return w.Err()
	}
	renderNodeLines(w, res)
	renderGroups(w, res)
	return w.Err()
}

func renderUnreachable(w io.Writer, res *Result) {
	if len(res.Unreachable) == 0 {
		return
	}
	fmt.Fprintf(w, "\nunreachable agents: %d of %d nodes (their paths were not tried)\n", len(res.Unreachable), len(res.Nodes))
	if len(res.Unreachable) <= meshDeadLines {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, u := range res.Unreachable {
			during := ""
			if u.During {
				during = " (stopped answering during the run)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", termtext.Clean(u.Node), termtext.Clean(u.Agent), termtext.Clean(oneLine(u.Cause)), during)
		}
		tw.Flush()
		return
	}
	for _, g := range res.UnreachableGroups() {
		fmt.Fprintf(w, "  %s (%d):\n", termtext.Clean(oneLine(g.Cause)), len(g.Nodes))
		names := make([]string, len(g.Nodes))
		for i, u := range g.Nodes {
			names[i] = termtext.Clean(u.Node)
		}
		wrapNames(w, names, "    ", meshDeadLines)
	}
}

// wrapNames writes names separated by spaces in lines of at most meshWidth
// columns, at most maxLines of them; the last says how many were left out.
func wrapNames(w io.Writer, names []string, indent string, maxLines int) {
	line, lines := indent, 0
	for i, n := range names {
		if len(line) > len(indent) && len(line)+1+len(n) > meshWidth {
			if lines == maxLines-1 {
				fmt.Fprintf(w, "%s ... and %d more (--json lists them)\n", line, len(names)-i)
				return
			}
			fmt.Fprintln(w, line)
			line, lines = indent, lines+1
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += n
	}
	fmt.Fprintln(w, line)
}

func renderMatrix(w io.Writer, res *Result) {
	for net := 1; net <= res.Networks; net++ {
		fmt.Fprintf(w, "\nnetwork %d%s: path MTU from row to column ('!' marks a problem, down: agent unreachable, n/m: not measured)\n", net, family(res, net))
		writeCells(w, res.Matrix(net))
	}
}

// writeCells writes a matrix whose first row and column name the nodes:
// the names left-aligned, the cells right-aligned.
func writeCells(w io.Writer, cells [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	width := 0
	for _, row := range cells {
		width = max(width, len(termtext.Clean(row[0])))
	}
	for _, row := range cells {
		fmt.Fprintf(tw, "%-*s\t", width, termtext.Clean(row[0]))
		for _, c := range row[1:] {
			fmt.Fprintf(tw, "%s\t", termtext.Clean(c))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// renderProblemList lists every tried problem path (the small-mesh form).
func renderProblemList(w io.Writer, res *Result) {
	var problems []Path
	for _, p := range res.Paths {
		if p.Skipped == "" && p.Problem() {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		fmt.Fprintf(w, "\nno problem paths among those tried\n")
		return
	}
	fmt.Fprintf(w, "\nproblem paths (%d of %d):\n", len(problems), len(res.Paths))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range problems {
		renderPath(tw, p)
	}
	tw.Flush()
}

func renderPath(w io.Writer, p Path) {
	ends := fmt.Sprintf("  %s -> %s\t%s -> %s", termtext.Clean(p.From), termtext.Clean(p.To), p.FromAddr, p.ToAddr)
	if p.Error != "" {
		fmt.Fprintf(w, "%s\terror\t%s\n", ends, termtext.Clean(oneLine(p.Error)))
		return
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", ends, p.Verdict, p.PathMTU, termtext.Clean(oneLine(p.Detail)))
}

// renderNodeLines prints one line per reachable node with a problem or a
// failure, and one line for all the others.
func renderNodeLines(w io.Writer, res *Result) {
	sums := res.NodeSummaries()
	fmt.Fprintf(w, "\nnodes (paths measured from / to each; lowest path MTU):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	clean, lowest := 0, 0
	for _, s := range sums {
		if s.Out.Problems == 0 && s.In.Problems == 0 && s.Failed == 0 {
			clean++
			if m := min(nonZero(s.Out.MinMTU), nonZero(s.In.MinMTU)); m > 0 && (lowest == 0 || m < lowest) {
				lowest = m
			}
			continue
		}
		failed := ""
		if s.Failed > 0 {
			failed = fmt.Sprintf("\t%d failed", s.Failed)
		}
		fmt.Fprintf(tw, "  %s\tfrom: %d measured, %d problem(s), lowest %d\tto: %d measured, %d problem(s), lowest %d%s\n",
			termtext.Clean(s.Name), s.Out.Measured, s.Out.Problems, s.Out.MinMTU, s.In.Measured, s.In.Problems, s.In.MinMTU, failed)
	}
	tw.Flush()
	if clean > 0 {
		fmt.Fprintf(w, "  %d of %d reachable nodes: every measured path ok (lowest path MTU %d)\n", clean, len(sums), lowest)
	}
}

func nonZero(v int) int {
	if v == 0 {
		return 1 << 30
	}
	return v
}

func renderGroups(w io.Writer, res *Result) {
	gs := res.ProblemGroups()
	if len(gs) == 0 {
		fmt.Fprintf(w, "\nno problem paths among those tried\n")
		return
	}
	fmt.Fprintf(w, "\nproblem paths by verdict:\n")
	for _, g := range gs {
		fmt.Fprintf(w, "  %s: %d path(s)\n", termtext.Clean(oneLine(g.Verdict)), len(g.Paths))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, p := range g.Paths {
			if i == meshGroupMax {
				fmt.Fprintf(tw, "    ... and %d more (--json lists every path)\n", len(g.Paths)-i)
				break
			}
			fmt.Fprint(tw, "  ")
			renderPath(tw, p)
		}
		tw.Flush()
	}
}

// family names the address family of a network when all nodes agree.
func family(res *Result, net int) string {
	fam := ""
	for _, n := range res.Nodes {
		if net > len(n.Addrs) {
			continue
		}
		f := "IPv4"
		if a := n.Addrs[net-1]; a.Is6() && !a.Is4In6() {
			f = "IPv6"
		}
		if fam != "" && fam != f {
			return ""
		}
		fam = f
	}
	if fam == "" {
		return ""
	}
	return " (" + fam + ")"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
