package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/db"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newDBCmd) }

func newDBCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use: "db",
		// The README's command table is generated from this line; it
		// changes with the README (see docs/galera.md for MySQL).
		Short: "Database workloads (PostgreSQL, MySQL/MariaDB Galera) with the interconnect's cost during the run",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	c.AddCommand(newDBBenchCmd(e))
	return c
}

// labProbes reads each node of the lab called name from inside it.
func labProbes(name string) ([]db.NodeProbe, error) {
	l, err := lab.Open(name)
	if err != nil {
		return nil, err
	}
	var out []db.NodeProbe
	for _, n := range l.Nodes() {
		out = append(out, db.NodeProbe{Name: n.Name(), Take: func() (*counters.Snapshot, error) {
			var s *counters.Snapshot
			err := n.Do(func() error {
				var err error
				s, err = counters.Take()
				return err
			})
			return s, err
		}, CPU: n.ProcessCPU})
	}
	return out, nil
}

// dbBenchFlags are db bench's flags; spec collects those that go
// straight into the workload's spec.
type dbBenchFlags struct {
	spec     db.Spec
	workload string
	labName  string
	asJSON   bool
}

const dbBenchLong = `Run pgbench's transactions against the PostgreSQL server named by --dsn (a libpq URL
or key=value string), or sysbench's oltp_read_write against MySQL or MariaDB servers
(mysql:// URLs), one connection per client, prepared statements, until --time or
--transactions, and report what a DBA measures during the run.

PostgreSQL workloads:

  tpcb           pgbench's default TPC-B-like transaction (account, teller, branch, history)
  simple-update  pgbench -N: without the teller and branch updates
  select-only    pgbench -S: one primary-key lookup (works on a standby)

From the server: transactions per second, latency p50/p90/p99/p99.9/max, failed
transactions by reason (serialization, deadlock, connection lost, other), the WAL
generated (pg_current_wal_lsn before and after, per transaction), and for each standby
in pg_stat_replication its sync state, how far its sent/write/flush/replay positions
moved and its lag. From this node (/proc): the bytes, packets, drops and errors of the
interface the server is routed through, IP fragments and reassembly, TCP segments and
retransmits, and host CPU (user, system, softirq) per transaction.

--init creates pgbench's tables at --scale (100,000 accounts each, at most 100) and
marks them as interlink's; it refuses to drop tables it did not create. Without
--init the run uses the existing pgbench tables (from an earlier --init or pgbench -i).

MySQL and MariaDB (--dsn mysql://USER:PASSWORD@HOST:PORT/DB; the password may come from
MYSQL_PWD instead, so it need not be on a command line): oltp-read-write, sysbench's
transaction (10 point selects, a simple, sum, order and distinct range of 100 rows, an
index and a non-index update, a delete and an insert of one row) on sbtest1..N, which
--init creates with --tables (default 1) of --table-size rows (default 10000). Give
several servers (--dsn again, or HOST:PORT,HOST:PORT in one URL): the clients are spread
over all of them, client i on server i mod N, as for a Galera cluster whose every
member takes writes. A conflict the server asks to retry (error 1213: a Galera
certification failure or a deadlock) is tried again, at most 10 times, and counted;
latency runs from the first try. A client whose server is lost goes on against the
next that answers, and the server is reported lost. From each server: its committed
transactions and conflicts and, with Galera, its wsrep counters over the run: write
sets and bytes replicated and received (per transaction), certification failures and
brute-force aborts (per second), the time flow control paused replication.

Inside a lab ('interlink lab exec LAB NODE -- interlink db bench ...', or --lab LAB) it
also reads every node's own /proc/net before and after the load: each interface's bytes
and packets (on the database nodes, the interconnect that carries the replication
stream), IP fragments and TCP retransmits.`

func newDBBenchCmd(e *env) *cobra.Command {
	var f dbBenchFlags
	c := &cobra.Command{
		// Use and Short make the README's command table: they change with
		// the README (MySQL: see docs/galera.md and the long help).
		Use:   "bench --dsn DSN [--clients N] [--time D] [--init [--scale S]]",
		Short: "Run an OLTP load (pgbench-like, or sysbench oltp_read_write on MySQL) and measure TPS, latency, replication and network cost",
		Long:  dbBenchLong,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDBBench(e, &f, cmd.Flags().Changed("lab"))
		},
	}
	f.bind(c.Flags())
	return c
}

func (d *dbBenchFlags) bind(f *pflag.FlagSet) {
	f.StringArrayVar(&d.spec.DSNs, "dsn", nil, "server to run against: postgres://USER:PASSWORD@HOST:PORT/DB or 'host=... dbname=...' (libpq; PGPASSWORD etc. apply), or mysql://USER:PASSWORD@HOST:PORT[,HOST:PORT...]/DB (MYSQL_PWD applies); again for more MySQL servers")
	f.StringVar(&d.workload, "workload", "", "PostgreSQL: tpcb (default), simple-update (pgbench -N) or select-only (pgbench -S); MySQL: oltp-read-write (default)")
	f.IntVar(&d.spec.Clients, "clients", 1, "connections, each running transactions back to back")
	f.DurationVar(&d.spec.Duration, "time", 10*time.Second, "how long to run (at most 1h)")
	f.Int64Var(&d.spec.MaxTransactions, "transactions", 0, "stop after this many transactions in all (0: only --time bounds the run)")
	f.IntVar(&d.spec.Scale, "scale", 0, "PostgreSQL, with --init: scale factor (100,000 accounts each; default 1, at most 100)")
	f.IntVar(&d.spec.Tables, "tables", 0, "MySQL, with --init: sbtest tables to create (default 1, at most 64)")
	f.IntVar(&d.spec.TableSize, "table-size", 0, "MySQL, with --init: rows in each table (default 10000; at most 10,000,000 in all)")
	f.BoolVar(&d.spec.Init, "init", false, "create and fill pgbench's (or sysbench's) tables first (drops interlink's earlier ones, never others)")
	f.DurationVar(&d.spec.Interval, "interval", time.Second, "per-interval lines every (at least 100ms)")
	f.DurationVar(&d.spec.ConnectTimeout, "connect-timeout", db.DefaultConnectTimeout, "give up connecting after (unless the DSN sets connect_timeout)")
	f.StringVar(&d.labName, "lab", "", "also measure every node of this lab (default: $INTERLINK_LAB, set by lab exec)")
	f.BoolVar(&d.asJSON, "json", false, "print JSON (schema interlink.db/v1)")
}

// runDBBench checks the spec, finds the lab to measure too (--lab, else
// the one lab exec names), runs the load and prints it.
func runDBBench(e *env, f *dbBenchFlags, labSet bool) error {
	spec := f.spec
	spec.Workload = db.Workload(f.workload)
	if _, err := spec.Normalize(); err != nil {
		return usageError("db bench: %v", err)
	}
	if err := fence(e, "db bench", spec.Hosts()...); err != nil {
		return err
	}
	labName, from := f.labName, "--lab "
	if !labSet {
		// Set by lab exec; named as such when it is wrong, since the
		// command line has no --lab to blame.
		labName, from = os.Getenv("INTERLINK_LAB"), "$INTERLINK_LAB="
	}
	if labName != "" {
		probes, err := labProbes(labName)
		if err != nil {
			return usageError("db bench: %s%s: %v", from, termtext.Clean(labName), err)
		}
		spec.Nodes = probes
	}
	var obs db.Observer
	if !f.asJSON {
		obs = db.Observer{
			Start:    func(r *db.Result) { db.WriteHeader(e.stdout, r) },
			Interval: func(iv db.Interval) { db.WriteInterval(e.stdout, iv) },
		}
	}
	res, err := db.Run(e.ctx, spec, obs)
	if err != nil {
		switch {
		case errors.Is(err, db.ErrSpec), errors.Is(err, db.ErrConnect), errors.Is(err, db.ErrTables):
			return usageError("db bench: %v", err)
		case errors.Is(err, db.ErrInterrupted):
			return usageError("db bench: interrupted before the load started")
		}
		return fmt.Errorf("db bench: %w", err)
	}
	if f.asJSON {
		if err := report.JSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		if werr := db.WriteSummary(e.stdout, res); werr != nil {
			return fmt.Errorf("db bench: write report: %w", werr)
		}
	}
	switch {
	case res.StoppedBy == db.StopInterrupted:
		return withCode(ExitUnknown)
	case res.Transactions == 0:
		fmt.Fprintln(e.stderr, "interlink: db bench: no transaction committed")
		return withCode(ExitCritical)
	case res.Failed.Total > 0:
		return withCode(ExitWarning)
	}
	return nil
}
