package cluster

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// clusterFindingsMax bounds the findings listed per node in the text
// report; --json has them all.
const clusterFindingsMax = 10

// WriteText writes the cluster report: node counts, per-node steps and
// problems, findings, and the mesh.
func WriteText(out io.Writer, res *Result) error {
	w := textout.New(out)
	c := res.Counts()
	var parts []string
	for _, s := range []string{StatusOK, StatusUnreachable, StatusFailed, StatusStopped} {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	fmt.Fprintf(w, "interlink cluster: %d nodes (%s), %s, at most %d at once\n",
		len(res.Nodes), strings.Join(parts, ", "), res.Elapsed.Round(time.Millisecond), res.Parallel)
	if res.Stopped != "" {
		fmt.Fprintf(w, "STOPPED EARLY: %s; %s\n", termtext.Clean(res.Stopped), CleanupSummary(res))
	}
	renderClusterware(w, res)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "NODE\tSSH\tSTATUS\tBINARY\tCHECK\tLEFT ON NODE\n")
	for _, n := range res.Nodes {
		status := n.Status
		if n.Cause != "" {
			status += " (" + n.Cause + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Clean(n.Name),
			termtext.Clean(fmt.Sprintf("%s@%s:%d", n.User, n.HostName, n.Port)), status,
			orDash(n.Binary), checkCell(n), leftCell(n))
	}
	tw.Flush()
	renderNodeProblems(w, res)
	renderFindings(w, res)
	fmt.Fprintln(w)
	switch {
	case res.Mesh != nil:
		fmt.Fprintf(w, "mesh (from %s):\n", res.MeshFrom)
		mesh.WriteText(w, res.Mesh)
	default:
		fmt.Fprintf(w, "mesh: not run: %s\n", res.MeshSkipped)
	}
	if res.Bench != nil {
		writeBench(w, res.Bench)
	}
	if res.GC != nil {
		writeGC(w, res.GC)
	}
	return w.Err()
}

// CleanupSummary says whether every node was cleaned up, or how many may
// still hold something of the run (LEFT ON NODE says what).
func CleanupSummary(res *Result) string {
	left := 0
	for _, n := range res.Nodes {
		if !n.Cleanup.Done {
			left++
		}
	}
	if left == 0 {
		return "every node was cleaned up"
	}
	return fmt.Sprintf("%d of %d nodes may still hold something of the run (see LEFT ON NODE)", left, len(res.Nodes))
}

func checkCell(n NodeResult) string {
	switch {
	case n.Check != nil:
		s := n.Check.Summary
		return fmt.Sprintf("%s (%d critical, %d warning)", s.Status, s.Critical, s.Warning)
	case n.CheckError != "":
		return "could not run"
	}
	return "-"
}

func leftCell(n NodeResult) string {
	switch {
	case n.Cleanup.Error != "":
		return "MAYBE: " + termtext.Clean(n.Cleanup.Error)
	case n.Cleanup.Removed != "" && n.Cleanup.Reconnected:
		return "nothing (removed " + termtext.Clean(n.Cleanup.Removed) + " over a new connection)"
	case n.Cleanup.Removed != "":
		return "nothing (removed " + termtext.Clean(n.Cleanup.Removed) + ")"
	}
	return "nothing"
}

// renderNodeProblems gives each node that is not ok its one line: an
// unreachable node (SSH) is a different thing from a failing path (mesh).
func renderNodeProblems(w io.Writer, res *Result) {
	first := true
	for _, n := range res.Nodes {
		var lines []string
		if n.Error != "" {
			lines = append(lines, n.Error)
		}
		if n.CheckError != "" {
			lines = append(lines, "check: "+n.CheckError)
		}
		lines = append(lines, n.Notes...)
		if len(lines) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nnodes not fully covered:\n")
			first = false
		}
		for _, l := range lines {
			fmt.Fprintf(w, "  %s: %s\n", termtext.Clean(n.Name), termtext.Clean(oneLine(l)))
		}
	}
}

// kernelRule is the check rule that says what a node's kernel lacks for
// interlink: listed for every node whatever its severity, and first, so
// the reason for a figure shown n/a (or a lab refused) is read before any
// bench figure and is never cut off by the per-node limit.
const kernelRule = "KERNEL-FACILITIES"

// nodeFindings is what the text report lists of one node's findings: the
// kernel's, then the critical and warning ones.
func nodeFindings(c *rules.Result) []rules.Finding {
	var fs []rules.Finding
	for _, f := range c.Findings {
		if f.Rule == kernelRule {
			fs = append(fs, f)
		}
	}
	for _, f := range c.Findings {
		if f.Rule != kernelRule && (f.Severity == rules.Critical || f.Severity == rules.Warning) {
			fs = append(fs, f)
		}
	}
	return fs
}

// renderFindings lists each node's kernel finding and its critical and
// warning findings.
func renderFindings(w io.Writer, res *Result) {
	found, checked := false, false
	for _, n := range res.Nodes {
		if n.Check == nil {
			continue
		}
		checked = true
		fs := nodeFindings(n.Check)
		if len(fs) == 0 {
			continue
		}
		if !found {
			fmt.Fprintf(w, "\ncheck findings (the kernel's facilities, then critical and warning; 'interlink check' on the node, or --json, has the evidence):\n")
			found = true
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, f := range fs {
			if i == clusterFindingsMax {
				fmt.Fprintf(tw, "  %s\t... and %d more\n", termtext.Clean(n.Name), len(fs)-i)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", termtext.Clean(n.Name), f.Severity, termtext.Clean(f.Rule),
				termtext.Clean(oneLine(f.Object+": "+f.Message)))
		}
		tw.Flush()
	}
	if checked && !found {
		fmt.Fprintf(w, "\ncheck findings: none above info on the nodes checked, and their kernels lack nothing interlink uses\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
