package db

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/units"
)

// writeMySQLHeader opens a MySQL run: the servers, the workload, the tables.
func writeMySQLHeader(w io.Writer, r *Result) {
	s := r.Spec
	addrs := make([]string, len(r.Members))
	for i, m := range r.Members {
		addrs[i] = termtext.Clean(m.Address)
	}
	what := fmt.Sprintf("%s %s", r.Server.Product, termtext.Clean(r.Server.Version))
	for _, m := range r.Members { // the first whose start was read
		if m.Galera != nil {
			what += fmt.Sprintf(", Galera cluster of %d", m.Galera.ClusterSizeStart)
			break
		}
	}
	fmt.Fprintf(w, "interlink db bench %s (%s): %s, %d table(s) of %d rows, %d client(s) over %d server(s), %v",
		strings.Join(addrs, " "), what, s.Workload, r.Server.Tables, r.Server.TableSize, s.Clients, len(r.Members), s.Duration)
	if s.MaxTransactions != DefaultMaxTx {
		fmt.Fprintf(w, " or %d transactions", s.MaxTransactions)
	}
	fmt.Fprintln(w)
	if r.Server.InitDuration > 0 {
		fmt.Fprintf(w, "init: %d table(s) of %d rows (sbtest1..%d, %s) created in %.1f s\n", r.Server.Tables, r.Server.TableSize,
			r.Server.Tables, units.FormatBytes(float64(r.Server.InitBytes)), time.Duration(r.Server.InitDuration).Seconds())
	}
}

// writeMembers prints each server's share and counters, then the Galera
// cluster's sums.
func writeMembers(w io.Writer, r *Result) {
	for _, m := range r.Members {
		fmt.Fprintf(w, "  server %s (%s): %d client(s) at the start, %d committed here (%.1f tps), %d conflicts, %d connections lost",
			termtext.Clean(m.Name), termtext.Clean(m.Address), m.Clients, m.Transactions, m.TPS, m.Conflicts, m.ConnectionLost)
		if m.LostAt > 0 {
			fmt.Fprintf(w, "; lost at %s s (%s), its clients went on against the others", secs(time.Duration(m.LostAt)), termtext.Clean(m.LostError))
		}
		fmt.Fprintln(w)
		if g := m.Galera; g != nil && m.Error == "" {
			fmt.Fprintf(w, "    galera: %s -> %s, cluster of %d (%s); replicated %d write sets, %s; received %d, %s; certification failures %d, brute-force aborts %d; flow control paused %s, sent %d, received %d\n",
				termtext.Clean(g.StateStart), termtext.Clean(g.StateEnd), g.ClusterSizeEnd, termtext.Clean(g.ClusterStatus),
				g.Replicated, units.FormatBytes(float64(g.ReplicatedBytes)), g.Received, units.FormatBytes(float64(g.ReceivedBytes)),
				g.CertFailures, g.BFAborts, ms(g.FlowControlPaused), g.FlowControlSent, g.FlowControlRecv)
		}
	}
	g := r.Galera
	if g == nil {
		return
	}
	fmt.Fprintf(w, "  galera (%d of %d servers measured): replicated %s = %s per transaction, received %s = %s per transaction; certification failures %d = %.1f per second (brute-force aborts %d); flow control paused %s (%.2f %% of the run), %d pause requests\n",
		g.Members, len(r.Members), units.FormatBytes(float64(g.ReplicatedBytes)), units.FormatBytes(g.ReplicatedBytesPerTx),
		units.FormatBytes(float64(g.ReceivedBytes)), units.FormatBytes(g.ReceivedBytesPerTx),
		g.CertFailures, g.CertFailuresPerSec, g.BFAborts, ms(g.FlowControlPaused), g.FlowControlPausedPercent, g.FlowControlSent)
}
