package watch

import (
	"fmt"
	"io"
	"time"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/textout"
)

// WriteDashboard writes the text dashboard of a round: when it ran, the
// mesh report (counts, unreachable agents, the path MTU matrix, the problem
// paths) and the matrix of node-to-node median round trips. It is what a
// terminal without Grafana shows (`interlink watch --dashboard`).
func WriteDashboard(out io.Writer, r Round, every time.Duration) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink watch: round %d at %s (every %s), %d paths, %d with a problem\n",
		r.N, r.At.Format("2006-01-02 15:04:05"), every, r.Paths, r.Problems)
	if r.Result == nil {
		fmt.Fprintln(w, "no mesh this round (no agent answered)")
		return w.Err()
	}
	mesh.WriteText(w, r.Result)
	mesh.WriteRTT(w, r.Result)
	return w.Err()
}
