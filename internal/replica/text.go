package replica

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// Files says where the replica's files went, for the commands WriteText
// suggests.
type Files struct {
	Topology string // the topology file (--write)
	Nodes    string // the mesh nodes file (--nodes); "" none
	Up       bool   // the lab was brought up
	// TokenFile is the lab's agent token file (topology.AgentTokenFile), which
	// the suggested mesh command reads; "" leaves --token-file out.
	TokenFile string
}

// WriteText writes the replica for a terminal: the nodes and where they
// came from, what the measured paths decided, the notes, what the replica
// cannot reproduce, and the commands that prove it against the run.
func (r *Replica) WriteText(out io.Writer, f Files) error {
	w := textout.New(out)
	t := r.Topology
	routers := 0
	for _, n := range t.Nodes {
		if n.Forward {
			routers++
		}
	}
	what := "check bundles, paths not measured"
	if r.Measured {
		what = "cluster run with its measured mesh"
	}
	fmt.Fprintf(w, "interlink lab replica: %s (%s)\n", termtext.Clean(r.From), what)
	fmt.Fprintf(w, "lab %s: %d cluster nodes, %d switches, %d other nodes (routers, filers)\n", t.Name, len(r.Nodes), len(t.Switches), len(t.Nodes)-len(r.Nodes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLUSTER NODE\tLAB NODE\tLINK\tSWITCH\tMTU\tPORT MTU\tADDRESSES")
	for _, n := range t.Nodes {
		cl := "-"
		for _, m := range r.Nodes {
			if m.Lab == n.Name {
				cl = m.Cluster
			}
		}
		name := n.Name
		for _, l := range n.Links {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\n", termtext.Clean(cl), name, l.Name, l.Switch, l.MTU, l.PortMTU, joinPrefixes(l.Addresses))
			cl, name = "", ""
		}
	}
	tw.Flush()
	section(w, "from the measured paths", r.Decisions)
	section(w, "notes", r.Notes)
	same := 0
	for _, p := range r.Predicted {
		if p.Same {
			same++
		}
	}
	if r.Measured {
		fmt.Fprintf(w, "measured paths the replica gives alike: %d of %d\n", same, len(r.Predicted))
	}
	section(w, "cannot reproduce", r.Limits)
	fmt.Fprintln(w, "next:")
	if !f.Up && f.Topology != "" {
		fmt.Fprintf(w, "  %s\n", shellq.Join("interlink", "lab", "up", f.Topology))
	}
	if f.Nodes != "" && len(r.Nodes) > 1 {
		from := r.Nodes[0].Lab
		args := []string{"interlink", "lab", "exec", t.Name, from, "--", "interlink", "mesh", "--nodes", f.Nodes}
		if f.TokenFile != "" {
			args = append(args, "--token-file", f.TokenFile)
		}
		args = append(args, "--json")
		if r.Expect > 0 {
			args = append(args, "--expect", fmt.Sprint(r.Expect))
		}
		fmt.Fprintf(w, "  %s > replica-mesh.json\n", shellq.Join(args...))
		if r.Measured {
			fmt.Fprintf(w, "  %s\n", shellq.Join("interlink", "diff", r.From, "replica-mesh.json"))
		}
	}
	for _, m := range r.Nodes {
		if len(m.Interconnect) == 0 {
			continue
		}
		ic := strings.Join(m.Interconnect, ",")
		if m.Bundle != "" {
			fmt.Fprintf(w, "  %s\n", shellq.Join("interlink", "check", "--root", m.Bundle, "--interconnect", ic))
		}
		fmt.Fprintf(w, "  %s\n", shellq.Join("interlink", "lab", "exec", t.Name, m.Lab, "--", "interlink", "check", "--interconnect", ic))
	}
	return w.Err()
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, l := range lines {
		fmt.Fprintf(w, "  - %s\n", termtext.Clean(l))
	}
}
