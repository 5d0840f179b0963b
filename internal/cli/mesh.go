package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/report"
)

func init() { commands = append(commands, newMeshCmd) }

func newMeshCmd(e *env) *cobra.Command {
	var (
		pf        probeFlags
		nodesFile string
	)
	c := &cobra.Command{
		Use:   "mesh [NAME=]AGENT[:PORT][@ADDR,...]... | --nodes FILE",
		Short: "Prove the path MTU of every path between N nodes, as a matrix",
		Long: `Make every node's agent probe every other node's agent, on every interconnect
network, in both directions, in rounds of disjoint pairs (N-1 rounds for N nodes),
and print a matrix of path MTUs (row: from, column: to) per network, then the
problem paths with their verdicts.

Nodes come from --nodes FILE, one per line:
  # name  agent[:port]     interconnect addresses (the i-th of each node: network i)
  node1   198.18.0.1       198.18.10.1 fd00:10::1
or from the command line as [NAME=]AGENT[:PORT][@ADDR,ADDR...]. A node without
addresses is probed on its agent address.

Exit 2 when a path is below --expect; 1 when a path has a problem verdict
(icmp, blackhole, unreachable) or could not be measured; 0 otherwise.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tok, opt, err := pf.parse("mesh", true)
			if err != nil {
				return err
			}
			var nodes []mesh.Node
			switch {
			case nodesFile != "" && len(args) > 0:
				return usageError("mesh: give nodes either with --nodes or as arguments, not both")
			case nodesFile != "":
				f, err := os.Open(nodesFile)
				if err != nil {
					return usageError("mesh: --nodes: %v", err)
				}
				nodes, err = mesh.ParseNodes(f, nodesFile)
				f.Close()
				if err != nil {
					return usageError("mesh: %v", err)
				}
			default:
				for _, a := range args {
					n, err := mesh.ParseNode(a)
					if err != nil {
						return usageError("mesh: %v", err)
					}
					nodes = append(nodes, n)
				}
				if err := mesh.Check(nodes); err != nil {
					return usageError("mesh: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(e.ctx, pf.timeout)
			defer cancel()
			mo := mesh.Options{Token: tok, Probe: opt, Software: "interlink " + buildVersion().Version}
			if showProgress(e, pf.asJSON) {
				mo.Progress = func(round, rounds int) {
					fmt.Fprintf(e.stderr, "\rmesh: round %d of %d done", round, rounds)
					if round == rounds {
						fmt.Fprint(e.stderr, "\r\033[K")
					}
				}
			}
			res, err := mesh.Run(ctx, nodes, mo)
			if res == nil {
				return err
			}
			if pf.asJSON {
				if jerr := report.JSON(e.stdout, res); jerr != nil {
					return jerr
				}
			} else {
				renderMesh(e.stdout, res)
			}
			if err != nil {
				return err
			}
			return withCode(meshCode(res))
		},
	}
	pf.add(c)
	c.Flags().StringVar(&nodesFile, "nodes", "", "file listing the nodes: NAME AGENT[:PORT] [ADDR ...] per line")
	return c
}

func meshCode(res *mesh.Result) int {
	code := ExitOK
	for _, p := range res.Paths {
		switch {
		case p.MeetsExpect != nil && !*p.MeetsExpect:
			code = max(code, ExitCritical)
		case p.Problem() && p.Verdict != pmtu.LocalLimit:
			code = max(code, ExitWarning)
		}
	}
	return code
}

func renderMesh(w io.Writer, res *mesh.Result) {
	expect := ""
	if res.Expect > 0 {
		expect = fmt.Sprintf(", expect %d", res.Expect)
	}
	fmt.Fprintf(w, "interlink mesh: %d nodes, %d network(s), %d paths in %d rounds, %s%s\n",
		len(res.Nodes), res.Networks, len(res.Paths), res.Rounds, res.Elapsed.Round(time.Millisecond), expect)
	for net := 1; net <= res.Networks; net++ {
		fmt.Fprintf(w, "\nnetwork %d%s: path MTU from row to column ('!' marks a problem)\n", net, family(res, net))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		width := len("from \\ to")
		for _, n := range res.Nodes {
			width = max(width, len(n.Name))
		}
		fmt.Fprintf(tw, "%-*s\t", width, "from \\ to")
		for _, n := range res.Nodes {
			fmt.Fprintf(tw, "%s\t", n.Name)
		}
		fmt.Fprintln(tw)
		for _, from := range res.Nodes {
			fmt.Fprintf(tw, "%-*s\t", width, from.Name)
			for _, to := range res.Nodes {
				fmt.Fprintf(tw, "%s\t", res.Cell(net, from.Name, to.Name))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	var problems []mesh.Path
	for _, p := range res.Paths {
		if p.Problem() {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		fmt.Fprintf(w, "\nno problem paths\n")
		return
	}
	fmt.Fprintf(w, "\nproblem paths (%d of %d):\n", len(problems), len(res.Paths))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range problems {
		if p.Error != "" {
			fmt.Fprintf(tw, "  %s -> %s\t%s -> %s\terror\t%s\n", p.From, p.To, p.FromAddr, p.ToAddr, oneLine(p.Error))
			continue
		}
		fmt.Fprintf(tw, "  %s -> %s\t%s -> %s\t%s\t%d\t%s\n", p.From, p.To, p.FromAddr, p.ToAddr, p.Verdict, p.PathMTU, p.Detail)
	}
	tw.Flush()
}

// family names the address family of a network when all nodes agree.
func family(res *mesh.Result, net int) string {
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
