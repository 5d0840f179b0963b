package demo

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// Header is the first line of the text story.
func Header(out io.Writer) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink lab demo: three nodes whose hosts all say MTU %d, one switch port left at 1500\n", ExpectMTU)
	return w.Err()
}

// Render writes one finished section of r as text.
func Render(out io.Writer, s Section, r *Result) error {
	w := textout.New(out)
	switch s {
	case SectionLab:
		renderLab(w, r)
	case SectionCheck:
		renderCheck(w, r)
	case SectionMesh:
		renderMesh(w, r)
	case SectionBlocks:
		renderBlocks(w, r)
	case SectionTCP:
		renderTCP(w, r)
	case SectionGC:
		renderGC(w, r)
	case SectionAdvice:
		renderAdvice(w, r)
	}
	return w.Err()
}

// Footer says what became of the lab, and what went wrong.
func Footer(out io.Writer, r *Result) error {
	w := textout.New(out)
	fmt.Fprintln(w)
	switch {
	case r.Kept:
		// Commands to paste: the binary, token and lab state paths are the
		// user's, and may hold anything a path can.
		q, bin := shellq.Quote, r.Binary
		fmt.Fprintf(w, "The lab %s is still up, with an agent on every node (token %s). Explore it:\n", r.Lab, q(r.TokenFile))
		fmt.Fprintf(w, "  %s\n", shellq.Join(bin, "lab", "status", r.Lab))
		exec := "  " + shellq.Join(bin, "lab", "exec", r.Lab, "node1", "--", bin)
		fmt.Fprintf(w, "%s check --interconnect eth1\n", exec)
		var nodes []string // as the demo's mesh ran them
		if r.Mesh != nil {
			for _, n := range r.Mesh.Nodes {
				nodes = append(nodes, fmt.Sprintf("%s=%s@%s", n.Name, n.Agent, n.Addrs[0]))
			}
		}
		fmt.Fprintf(w, "%s mesh --token-file %s --expect %d %s\n", exec, q(r.TokenFile), ExpectMTU, shellq.Join(nodes...))
		if d := r.Diagnosis; d != nil && len(d.Ports) > 0 {
			p := d.Ports[0]
			fmt.Fprintf(w, "%s pmtu --token-file %s --target %s %s\n", exec, q(r.TokenFile), q(p.Address), q(agentOf(r, p.Node)))
		}
		if len(r.Blocks) > 0 {
			fmt.Fprintf(w, "%s bench --token-file %s --mode blocks %s\n", exec, q(r.TokenFile), q(r.Blocks[0].Address))
		}
		if len(nodes) > 0 {
			fmt.Fprintf(w, "%s bench --token-file %s --mode gc %s\n", exec, q(r.TokenFile), shellq.Join(nodes...))
		}
		fmt.Fprintf(w, "Remove it with: %s (the token and the agents' logs go with it)\n", shellq.Join(bin, "lab", "down", r.Lab))
	case r.Interrupted:
		fmt.Fprintf(w, "Interrupted after %s: the figures above are what was measured until then; lab %s removed.\n", r.Elapsed.Round(100*time.Millisecond), r.Lab)
	case len(r.Errors) > 0:
		fmt.Fprintf(w, "Stopped after %s: %s; lab %s removed.\n", r.Elapsed.Round(100*time.Millisecond), r.Errors[0], r.Lab)
	default:
		fmt.Fprintf(w, "Done in %s; lab %s removed (--keep leaves it up to explore with 'interlink lab exec').\n", r.Elapsed.Round(100*time.Millisecond), r.Lab)
	}
	return w.Err()
}

func agentOf(r *Result, node string) string {
	for _, a := range r.Agents {
		if a.Node == node {
			return strings.TrimSuffix(a.Address, fmt.Sprintf(":%d", agentPort))
		}
	}
	return node
}

func title(w io.Writer, n int, format string, a ...any) {
	fmt.Fprintf(w, "\n%d. %s\n", n, fmt.Sprintf(format, a...))
}

func renderLab(w io.Writer, r *Result) {
	title(w, 1, "The lab: built in %s (namespaces il-%s and il-%s.NODE; nothing on the host changes)", r.LabUp.Round(10*time.Millisecond), r.Lab, r.Lab)
	for _, sw := range r.Topology.Switches {
		role := "interconnect"
		if sw.Name == pubSwitch {
			role = "public network"
		}
		fmt.Fprintf(w, "  switch %s (%s, MTU %d):\n", sw.Name, role, sw.MTU)
		for _, n := range r.Topology.Nodes {
			for _, l := range n.Links {
				if l.Switch != sw.Name {
					continue
				}
				fmt.Fprintf(w, "    %s %s %-15s MTU %d", n.Name, l.Name, firstAddr(l.Addresses), l.MTU)
				if l.PortMTU != l.MTU {
					fmt.Fprintf(w, ", but its switch port: MTU %d", l.PortMTU)
				}
				fmt.Fprintln(w)
			}
		}
	}
	var addrs []string
	for _, a := range r.Agents {
		addrs = append(addrs, a.Node+" "+a.Address)
	}
	fmt.Fprintf(w, "  interlink agent on every node, shared token in a file of mode 0600:\n    %s\n", strings.Join(addrs, ", "))
}

// firstAddr is a link's first IPv4 address (the one the demo uses).
func firstAddr(ps []netip.Prefix) string {
	for _, p := range ps {
		if p.Addr().Is4() {
			return p.Addr().String()
		}
	}
	return "-"
}

func renderCheck(w io.Writer, r *Result) {
	title(w, 2, "Every host looks fine: interlink check --interconnect eth1 on each node")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tINTERCONNECT\tMTU\tSTATE\tCRITICAL\tWARNING\tINFO")
	for _, c := range r.Checks {
		if c.Result == nil {
			fmt.Fprintf(tw, "  %s\t%s\t-\t-\t-\t-\t-\n", c.Node, c.Interconnect)
			continue
		}
		mtu, state := "-", "-"
		if inv := c.Result.Inventory; inv != nil {
			for _, i := range inv.Interfaces {
				if i.Name == c.Interconnect {
					mtu, state = fmt.Sprint(i.MTU), i.OperState
				}
			}
		}
		s := c.Result.Summary
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%d\n", c.Node, c.Interconnect, mtu, state, s.Critical, s.Warning, s.Info)
	}
	tw.Flush()
	fs := Findings(r.Checks)
	mtuRule := false
	for _, f := range fs {
		if strings.Contains(f.Rule, "MTU") {
			mtuRule = true
		}
	}
	if !mtuRule {
		fmt.Fprintf(w, "  No finding about the interconnect's MTU: every host says %d, and no host can see its switch port.\n", ExpectMTU)
	}
	if len(fs) == 0 {
		fmt.Fprintln(w, "  No warning or critical finding on any node.")
		return
	}
	everywhere := true
	for _, f := range fs {
		everywhere = everywhere && len(f.Nodes) == len(r.Checks)
	}
	if everywhere {
		fmt.Fprintln(w, "  What check did find, on every node (host settings):")
	} else {
		fmt.Fprintln(w, "  What check did find (host settings):")
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range fs {
		on := ""
		if !everywhere {
			on = " (on " + strings.Join(f.Nodes, ", ") + ")"
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s%s\n", f.Severity, f.Rule, seen(f), on)
	}
	tw.Flush()
}

// seen says what a finding saw and what its rule detects, in one short
// line: "net.core.rmem_default = 212992: UDP socket buffer sysctls below
// Oracle's minimums". The full message, evidence and fix are in --json.
func seen(f SharedFinding) string {
	what := f.Object
	if len(f.Evidence) > 0 {
		what = f.Evidence[0].What + " = " + f.Evidence[0].Value
	}
	for _, rule := range rules.All() {
		if rule.ID == f.Rule {
			return what + ": " + rule.Title
		}
	}
	return what + ": " + f.Message
}

func renderMesh(w io.Writer, r *Result) {
	m := r.Mesh
	title(w, 3, "The paths say otherwise: interlink mesh --expect %d (%d paths in %s)", ExpectMTU, len(m.Paths), m.Elapsed.Round(100*time.Millisecond))
	fmt.Fprintln(w, "  path MTU on the interconnect, from row to column ('!' fails --expect)")
	grid(w, m.Matrix(1)) // the demo meshes one network: the interconnect
	d := r.Diagnosis
	for _, p := range d.Ports {
		fmt.Fprintf(w, "  Every path to and from %s (%d of %d) is a %s at %d: its %s says %d,\n", p.Node, p.Paths, d.Paths, p.Verdict, p.PathMTU, p.Interface, p.InterfaceMTU)
		fmt.Fprintf(w, "  but packets above %d bytes vanish without an ICMP error.\n", p.PathMTU)
	}
	for _, p := range m.Paths {
		if p.Problem() && p.Error == "" {
			fmt.Fprintf(w, "  e.g. %s -> %s: %s\n", p.From, p.To, p.Line())
			break
		}
	}
	if d.TracepathMTU > 0 {
		fmt.Fprintf(w, "  No ICMP error came back on any of these paths, so tracepath (which learns only from ICMP)\n")
		fmt.Fprintf(w, "  would have said \"pmtu %d\", and ping -s %d -M do shows 100 %% loss with no reason.\n", d.TracepathMTU, d.TracepathMTU-28)
	}
	for _, p := range m.Paths {
		if p.Error != "" {
			fmt.Fprintf(w, "  %s -> %s: not measured: %s\n", p.From, p.To, p.Error)
		}
	}
}

// row is one line of a side-by-side table: a name and a value per run.
type row struct {
	name string
	val  func(s *traffic.Summary) string
}

func table(w io.Writer, runs []Bench, rows []row) {
	cells := [][]string{{""}}
	for _, b := range runs {
		cells[0] = append(cells[0], fmt.Sprintf("%s (%s)", b.Label, b.Interface))
	}
	for _, rw := range rows {
		line := []string{rw.name}
		for _, b := range runs {
			v := "-"
			if s := b.Summary(); s != nil {
				v = rw.val(s)
			}
			line = append(line, v)
		}
		cells = append(cells, line)
	}
	grid(w, cells)
}

// grid writes cells as columns indented by two spaces: the first column
// left-aligned (names), the others right-aligned (numbers).
func grid(w io.Writer, cells [][]string) {
	var width []int
	for _, line := range cells {
		for i, c := range line {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, line := range cells {
		var b strings.Builder
		for i, c := range line {
			if i == 0 {
				fmt.Fprintf(&b, "  %-*s", width[0], c)
			} else {
				fmt.Fprintf(&b, "  %*s", width[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func usec(ns float64) string { return fmt.Sprintf("%.1f us", ns/1e3) }

// runErrors says which runs failed and why.
func runErrors(w io.Writer, runs []Bench) {
	for _, b := range runs {
		if b.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", b.Label, b.Error)
		}
	}
}

// duration is how long the runs were asked to last.
func duration(runs []Bench) time.Duration {
	if len(runs) == 0 || runs[0].Result == nil {
		return 0
	}
	return runs[0].Result.Spec.Duration
}

func renderTCP(w io.Writer, r *Result) {
	if len(r.TCP) == 0 {
		return
	}
	fmt.Fprintf(w, "\n  For contrast, one TCP stream: interlink bench --mode tcp, %s -> %s, %s each\n", r.TCP[0].From, r.TCP[0].To, duration(r.TCP))
	table(w, r.TCP, []row{
		{"throughput", func(s *traffic.Summary) string { return units.FormatRate(s.BitsPerSec) }},
		{"retransmits", func(s *traffic.Summary) string { return fmt.Sprint(s.Retransmits) }},
		{"CPU per GiB, sender + receiver", func(s *traffic.Summary) string {
			if s.ClientCost.CPUNsPerGiB <= 0 || s.ServerCost.CPUNsPerGiB <= 0 {
				return units.NotAvailable // nothing delivered: no cost per GiB, not 0 ms
			}
			return fmt.Sprintf("%.0f ms", (s.ClientCost.CPUNsPerGiB+s.ServerCost.CPUNsPerGiB)/1e6)
		}},
	})
	var segs []string
	for _, b := range r.TCP {
		if b.Result != nil && len(b.Result.Flows) > 0 && b.Result.Flows[0].Client != nil {
			for _, st := range b.Result.Flows[0].Client.Streams {
				segs = append(segs, fmt.Sprintf("MSS %d at %s", st.MSS, b.Label))
			}
		}
	}
	if len(segs) > 0 {
		fmt.Fprintf(w, "  TCP never fragments: it sends segments that fit the path (%s).\n", strings.Join(segs, ", "))
		fmt.Fprintln(w, "  On one machine segmentation offload (GSO/GRO) moves 64 KiB super-segments whatever the MTU,")
		fmt.Fprintln(w, "  so the MTU changes TCP little here; on real NICs, where every packet costs, it helps TCP too.")
		fmt.Fprintln(w, "  UDP blocks show the MTU directly.")
	}
	runErrors(w, r.TCP)
}

func renderAdvice(w io.Writer, r *Result) {
	title(w, 6, "What to do")
	for _, a := range r.Advice {
		fmt.Fprintf(w, "%s\n", wrap(a, "  - ", "    ", 100))
	}
}

// wrap fills text into lines of at most width, the first with first, the
// rest with rest as prefix.
func wrap(text, first, rest string, width int) string {
	var b strings.Builder
	line := first
	for _, word := range strings.Fields(text) {
		if len(line)+len(word)+1 > width && strings.TrimSpace(line) != strings.TrimSpace(first) {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = rest
		}
		if line != first && line != rest {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}
