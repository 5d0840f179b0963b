package mesh

import (
	"fmt"
	"io"

	"github.com/interlink/interlink/internal/textout"
)

// RTTCell is the median round trip of the probes on the path from one node
// to another on a network (1-based), in milliseconds: "-" on the diagonal,
// " " when the path was not measured or no probe was answered.
func (r *Result) RTTCell(network int, from, to string) string {
	if from == to {
		return "-"
	}
	p, ok := r.path(network, from, to)
	if !ok || p.Skipped != "" || p.Error != "" || p.RTT.Count == 0 {
		return " "
	}
	return fmt.Sprintf("%.2f", float64(p.RTT.P50)/1e6)
}

// WriteRTT writes, per network, the matrix of the probes' median round
// trips (node to node: the From node's agent timed them), when any path
// has one.
func WriteRTT(out io.Writer, res *Result) error {
	w := textout.New(out)
	has := false
	for _, p := range res.Paths {
		has = has || p.RTT.Count > 0
	}
	if !has || len(res.Nodes) > meshMatrixMax {
		return w.Err()
	}
	for net := 1; net <= res.Networks; net++ {
		fmt.Fprintf(w, "\nnetwork %d%s: median round trip of the probes in ms, from row to column\n", net, family(res, net))
		writeCells(w, res.matrix(net, res.RTTCell))
	}
	return w.Err()
}
