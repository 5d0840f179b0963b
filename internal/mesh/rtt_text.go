package mesh

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/termtext"
)

// RTTCell is the median round trip of the probes on the path from one node
// to another on a network (1-based), in milliseconds: "-" on the diagonal,
// " " when the path was not measured or no probe was answered.
func (r *Result) RTTCell(network int, from, to string) string {
	if from == to {
		return "-"
	}
	r.Cell(network, from, to) // builds the index
	i, ok := r.cells[cellKey{network, from, to}]
	if !ok {
		return " "
	}
	p := r.Paths[i]
	if p.Skipped != "" || p.Error != "" || p.RTT.Count == 0 {
		return " "
	}
	return fmt.Sprintf("%.2f", float64(p.RTT.P50)/1e6)
}

// WriteRTT writes, per network, the matrix of the probes' median round
// trips (node to node: the From node's agent timed them), when any path
// has one.
func WriteRTT(w io.Writer, res *Result) {
	has := false
	for _, p := range res.Paths {
		has = has || p.RTT.Count > 0
	}
	if !has || len(res.Nodes) > meshMatrixMax {
		return
	}
	for net := 1; net <= res.Networks; net++ {
		fmt.Fprintf(w, "\nnetwork %d%s: median round trip of the probes in ms, from row to column\n", net, family(res, net))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		width := len("from \\ to")
		for _, n := range res.Nodes {
			width = max(width, len(termtext.Clean(n.Name)))
		}
		fmt.Fprintf(tw, "%-*s\t", width, "from \\ to")
		for _, n := range res.Nodes {
			fmt.Fprintf(tw, "%s\t", termtext.Clean(n.Name))
		}
		fmt.Fprintln(tw)
		for _, from := range res.Nodes {
			fmt.Fprintf(tw, "%-*s\t", width, termtext.Clean(from.Name))
			for _, to := range res.Nodes {
				fmt.Fprintf(tw, "%s\t", res.RTTCell(net, from.Name, to.Name))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}
