package db

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// Observer receives a run's progress: Start once everything is connected
// (the Result then holds the spec and the server), Interval as each ends.
// Either may be nil.
type Observer struct {
	Start    func(*Result)
	Interval func(Interval)
}

// WriteHeader prints the line that opens a run, as `interlink bench` does.
func WriteHeader(out io.Writer, r *Result) error {
	w := textout.New(out)
	if len(r.Members) > 0 {
		writeMySQLHeader(w, r)
		return w.Err()
	}
	s := r.Spec
	fmt.Fprintf(w, "interlink db bench %s (PostgreSQL %s", termtext.Clean(r.Server.Address), termtext.Clean(r.Server.Version))
	if r.Server.InRecovery {
		fmt.Fprint(w, ", standby")
	}
	fmt.Fprintf(w, "): %s, scale %d, %d client(s), %v", s.Workload, r.Server.Scale, s.Clients, s.Duration)
	if s.MaxTransactions != DefaultMaxTx {
		fmt.Fprintf(w, " or %d transactions", s.MaxTransactions)
	}
	fmt.Fprintln(w)
	if r.Server.InitDuration > 0 {
		fmt.Fprintf(w, "init: scale %d (%d accounts, %s) created in %.1f s\n", r.Server.Scale,
			r.Server.Scale*AccountsPerScale, units.FormatBytes(float64(r.Server.InitBytes)), time.Duration(r.Server.InitDuration).Seconds())
	}
	fmt.Fprintf(w, "synchronous_commit %s, synchronous_standby_names '%s'\n",
		termtext.Clean(r.Server.SynchronousCommit), termtext.Clean(r.Server.SynchronousStandbyNames))
	return w.Err()
}

// WriteInterval prints one interval line.
func WriteInterval(out io.Writer, iv Interval) error {
	w := textout.New(out)
	line := fmt.Sprintf("[db] %6s-%-6s sec  %8d tx  %9.1f tps  p50 %s  p99 %s  max %s",
		secs(iv.Start), secs(iv.End), iv.Transactions, iv.TPS, ms(iv.P50), ms(iv.P99), ms(iv.Max))
	if iv.Failed > 0 {
		line += fmt.Sprintf("  failed %d", iv.Failed)
	}
	if iv.Retries > 0 {
		line += fmt.Sprintf("  retried %d", iv.Retries)
	}
	if iv.ReplayLagBytes >= 0 {
		line += "  standby replay lag " + units.FormatBytes(float64(iv.ReplayLagBytes))
	}
	fmt.Fprintln(w, line)
	return w.Err()
}

// WriteSummary prints the result after the intervals.
func WriteSummary(out io.Writer, r *Result) error {
	w := textout.New(out)
	fmt.Fprintln(w, strings.Repeat("- ", 40))
	f := r.Failed
	fmt.Fprintf(w, "transactions: %d committed in %s sec = %.1f tps (stopped by %s); failed %d (%.3f %%)",
		r.Transactions, secs(r.Duration), r.TPS, r.StoppedBy, f.Total, f.Percent)
	if f.Total > 0 {
		fmt.Fprintf(w, ": serialization %d, deadlock %d, connection lost %d, other %d", f.Serialization, f.Deadlock, f.ConnectionLost, f.Other)
	}
	fmt.Fprintln(w)
	if r.CancelledAtEnd > 0 {
		fmt.Fprintf(w, "  %d transaction(s) in flight at the end were cancelled (neither committed nor failed)\n", r.CancelledAtEnd)
	}
	if r.Conflicts > 0 || len(r.Members) > 0 {
		fmt.Fprintf(w, "  conflicts: %d = %.1f per second (%d tried again, at most %d tries a transaction)\n",
			r.Conflicts, r.ConflictsPerSec, r.Retries, MaxTries)
	}
	if f.LastError != "" {
		fmt.Fprintf(w, "  last failure: %s\n", termtext.Clean(f.LastError))
	}
	l := r.Latency
	fmt.Fprintf(w, "  latency: min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (mean %s)\n",
		ms(l.Min), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), ms(int64(l.Mean)))
	if len(r.Members) > 0 {
		writeMembers(w, r)
		writeLocal(w, r)
		writeErrors(w, r)
		return w.Err()
	}
	switch wal := r.WAL; {
	case wal.Error != "":
		fmt.Fprintf(w, "  wal: not measured: %s\n", termtext.Clean(wal.Error))
	default:
		fmt.Fprintf(w, "  wal: %s generated = %s per transaction (%s -> %s)\n", units.FormatBytes(float64(wal.Bytes)),
			units.FormatBytes(wal.BytesPerTx), wal.StartLSN, wal.EndLSN)
	}
	if len(r.Standbys) == 0 && !r.Server.InRecovery {
		fmt.Fprintln(w, "  standbys: none connected (pg_stat_replication is empty)")
	}
	for _, s := range r.Standbys {
		fmt.Fprintf(w, "  standby %s (%s, %s, %s)", termtext.Clean(s.Name), termtext.Clean(s.ClientAddr), termtext.Clean(s.SyncState), termtext.Clean(s.State))
		switch {
		case s.Gone:
			fmt.Fprintln(w, ": disconnected during the run")
			continue
		case !s.Visible:
			fmt.Fprintln(w, ": positions hidden (grant pg_monitor to the --dsn user)")
			continue
		}
		fmt.Fprintf(w, ": sent %s, flushed %s, replayed %s; replay lag at end %s (max %s), write/flush/replay lag %s/%s/%s (max replay %s)\n",
			units.FormatBytes(float64(s.SentBytes)), units.FormatBytes(float64(s.FlushBytes)), units.FormatBytes(float64(s.ReplayBytes)),
			units.FormatBytes(float64(s.ReplayLagBytes)), units.FormatBytes(float64(s.MaxReplayLagBytes)),
			ms(s.WriteLag), ms(s.FlushLag), ms(s.ReplayLag), ms(s.MaxReplayLag))
	}
	writeLocal(w, r)
	writeErrors(w, r)
	return w.Err()
}

func writeErrors(w io.Writer, r *Result) {
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  not measured: %s\n", termtext.Clean(e))
	}
	if r.StoppedBy == StopInterrupted {
		fmt.Fprintln(w, "interrupted: the figures cover the time until then")
	}
}

func writeLocal(w io.Writer, r *Result) {
	l := r.Local
	if l.Error != "" && l.NCPU == 0 {
		return // listed with the errors
	}
	switch l.Interface {
	case "":
		fmt.Fprintf(w, "  network: none (Unix socket %s)\n", termtext.Clean(l.RemoteAddr))
	default:
		fmt.Fprintf(w, "  network %s (route to %s): rx %s in %d packets, tx %s in %d packets = %.1f packets, %s per transaction; dropped %d, errors %d\n",
			l.Interface, termtext.Clean(l.RemoteAddr), units.FormatBytes(float64(l.RxBytes)), l.RxPackets,
			units.FormatBytes(float64(l.TxBytes)), l.TxPackets, l.PacketsPerTx, units.FormatBytes(l.BytesPerTx),
			l.RxDropped+l.TxDropped, l.RxErrors+l.TxErrors)
	}
	fmt.Fprintf(w, "  ip: %d fragments created, %d reassembled of %d (%d failed); tcp: %d segments in, %d out, %d retransmitted\n",
		l.FragCreates, l.ReasmOKs, l.ReasmReqds, l.ReasmFails, l.TCPInSegs, l.TCPOutSegs, l.TCPRetransSegs)
	busy := l.CPUUserNs + l.CPUSystemNs + l.CPUSoftIRQNs
	pct := 0.0
	if all := busy + l.CPUIdleNs; all > 0 {
		pct = 100 * float64(busy) / float64(all)
	}
	fmt.Fprintf(w, "  cpu host (%d CPUs): user %s, sys %s, softirq %s (%s %% busy) = %.1f us per transaction; interlink itself %s (%.1f us per transaction)\n",
		l.NCPU, msec(l.CPUUserNs), msec(l.CPUSystemNs), msec(l.CPUSoftIRQNs), units.FormatPercent(pct, 0), l.CPUNsPerTx/1e3, msec(l.ClientCPUNs), l.ClientCPUNsPerTx/1e3)
	writeNodes(w, r.Nodes, r.Transactions)
	writeLab(w, r.Lab)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

// ms prints a latency in milliseconds with two decimals.
func ms(ns int64) string { return fmt.Sprintf("%.2f ms", float64(ns)/1e6) }

// msec prints a CPU time in whole milliseconds.
func msec(ns int64) string { return fmt.Sprintf("%d ms", ns/1e6) }
