package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/pgtest"
)

// fast is for servers whose durability is not under test.
var fast = map[string]string{"fsync": "off", "full_page_writes": "off"}

// sharedPG is the server of the tests that need a database of their own
// but not a server: one initdb and start for all of them.
var sharedPG = &pgtest.Shared{Config: pgtest.Config{Settings: fast}}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := sharedPG.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "shared PostgreSQL server: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(t *testing.T, spec Spec) *Result {
	t.Helper()
	res, err := Run(context.Background(), spec, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func execSQL(t *testing.T, dsn string, sql ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range sql {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// checkRun asserts what every clean run must show.
func checkRun(t *testing.T, r *Result) {
	t.Helper()
	if r.Schema != Schema || r.Transactions <= 0 || r.TPS <= 0 {
		t.Fatalf("schema %q, %d transactions, %.1f tps", r.Schema, r.Transactions, r.TPS)
	}
	if r.Failed.Total != 0 {
		t.Errorf("a clean run failed %d transactions: %s", r.Failed.Total, r.Failed.LastError)
	}
	l := r.Latency
	if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("latency percentiles out of order: %+v", l)
	}
	if l.Max > int64(r.Duration)+int64(StopGrace) {
		t.Errorf("max latency %v beyond the run's %v", time.Duration(l.Max), r.Duration)
	}
	var sum int64
	for _, iv := range r.Intervals {
		sum += iv.Transactions
	}
	if sum != r.Transactions {
		t.Errorf("intervals hold %d transactions, the total is %d", sum, r.Transactions)
	}
	if len(r.Errors) != 0 {
		t.Errorf("sections not measured: %v", r.Errors)
	}
}

func TestRunLoopback(t *testing.T) {
	pg, db := sharedPG.DB(t)
	dsn := pg.DSN(db)
	r := run(t, Spec{DSN: dsn, Init: true, Clients: 3, Duration: 2 * time.Second, Interval: 500 * time.Millisecond})
	checkRun(t, r)
	if r.StoppedBy != StopTime || r.Duration < 2*time.Second || r.Duration > 2*time.Second+StopGrace {
		t.Errorf("stopped by %s after %v, want time after 2s", r.StoppedBy, r.Duration)
	}
	if r.Server.Scale != 1 || !r.Server.TablesCreatedByInterlink || r.Server.InitBytes < 10<<20 {
		t.Errorf("server %+v: want scale 1, interlink's tables, at least 10 MiB", r.Server)
	}
	// Every committed TPC-B transaction writes WAL (4 row changes and a commit record).
	if r.WAL.Bytes <= 0 || r.WAL.BytesPerTx < 100 {
		t.Errorf("WAL %+v: want more than 100 bytes per transaction", r.WAL)
	}
	if len(r.Standbys) != 0 {
		t.Errorf("standbys %+v on a lone server", r.Standbys)
	}
	// Loopback: the route lookup names lo, whose counters saw at least one
	// packet per statement each way (7 statements per transaction).
	lo := r.Local
	if lo.Interface != "lo" || !strings.HasPrefix(lo.RemoteAddr, "127.0.0.1:") {
		t.Errorf("local %q to %q, want lo to 127.0.0.1", lo.Interface, lo.RemoteAddr)
	}
	if lo.RxPackets < uint64(7*r.Transactions) || lo.TCPOutSegs < 7*r.Transactions || lo.PacketsPerTx < 7 {
		t.Errorf("%d transactions but lo rx %d packets, tcp out %d segments (%.1f packets per transaction)",
			r.Transactions, lo.RxPackets, lo.TCPOutSegs, lo.PacketsPerTx)
	}
	if lo.CPUUserNs+lo.CPUSystemNs <= 0 || lo.ClientCPUNs <= 0 || lo.NCPU < 1 {
		t.Errorf("cpu not measured: %+v", lo)
	}

	// interlink ab takes its metrics from the JSON document by name.
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	doc := ab.ParseJSON(js)
	for name, want := range map[string]float64{"tps": r.TPS, "latency_p99": float64(r.Latency.P99),
		"wal_bytes_per_tx": r.WAL.BytesPerTx, "packets_per_tx": lo.PacketsPerTx, "failed_percent": 0} {
		m, err := ab.ParseMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.Extract(js, doc, 0); err != nil || got != want {
			t.Errorf("ab metric %s = %v, %v; want %v", name, got, err, want)
		}
	}

	// A second run uses the tables as they are; select-only writes
	// (almost) no WAL; a count bound stops it exactly.
	r2 := run(t, Spec{DSN: dsn, Workload: SelectOnly, Clients: 2, Duration: time.Minute, MaxTransactions: 500})
	checkRun(t, r2)
	if r2.StoppedBy != StopTransactions || r2.Transactions != 500 {
		t.Errorf("stopped by %s after %d transactions, want 500", r2.StoppedBy, r2.Transactions)
	}
	// WAL is the server's, not the workload's alone: autovacuum and
	// hint-bit page images after the first run's updates add some 20 KB
	// (40 to 51 bytes a transaction over 500 here, against about 490 for
	// tpcb-like). Select-only must stay well below the read-write
	// workload, which writes in every transaction.
	t.Logf("WAL per transaction: tpcb-like %.0f bytes, select-only %.0f", r.WAL.BytesPerTx, r2.WAL.BytesPerTx)
	if r2.WAL.BytesPerTx > r.WAL.BytesPerTx/4 {
		t.Errorf("select-only wrote %.0f WAL bytes per transaction, tpcb-like %.0f", r2.WAL.BytesPerTx, r.WAL.BytesPerTx)
	}
}

func TestInitRefusesForeignTables(t *testing.T) {
	pg, db := sharedPG.DB(t)
	dsn := pg.DSN(db)
	execSQL(t, dsn, `CREATE TABLE pgbench_accounts (aid int)`, `INSERT INTO pgbench_accounts VALUES (42)`)
	_, err := Run(context.Background(), Spec{DSN: dsn, Init: true, Clients: 1, Duration: time.Second}, Observer{})
	if !errors.Is(err, ErrTables) || !strings.Contains(err.Error(), "not created by interlink") {
		t.Fatalf("--init over a foreign table: %v", err)
	}
	var n int
	c, _ := pgx.Connect(context.Background(), dsn)
	defer c.Close(context.Background())
	if err := c.QueryRow(context.Background(), `SELECT aid FROM pgbench_accounts`).Scan(&n); err != nil || n != 42 {
		t.Fatalf("the foreign table changed: %d, %v", n, err)
	}
	// Without --init the missing tables are named.
	execSQL(t, dsn, `DROP TABLE pgbench_accounts`)
	_, err = Run(context.Background(), Spec{DSN: dsn, Clients: 1, Duration: time.Second}, Observer{})
	if !errors.Is(err, ErrTables) || !strings.Contains(err.Error(), "--init") {
		t.Fatalf("run without tables: %v", err)
	}
}

func TestSynchronousStandby(t *testing.T) {
	pg := pgtest.New(t, pgtest.Config{Settings: fast})
	sb := pgtest.NewStandby(t, pg, "standby1", pgtest.Config{Settings: fast})
	execSQL(t, pg.DSN("postgres"), `ALTER SYSTEM SET synchronous_standby_names = 'standby1'`, `SELECT pg_reload_conf()`)
	r := run(t, Spec{DSN: pg.DSN("postgres"), Init: true, Workload: SimpleUpdate, Clients: 2, Duration: 2 * time.Second})
	checkRun(t, r)
	if r.Server.SynchronousStandbyNames != "standby1" {
		t.Errorf("synchronous_standby_names %q", r.Server.SynchronousStandbyNames)
	}
	if len(r.Standbys) != 1 {
		t.Fatalf("standbys %+v, want standby1", r.Standbys)
	}
	s := r.Standbys[0]
	// Every commit waited for the standby's flush, so its flush position
	// moved by about the WAL of the run (the end is read after the last
	// commit; allow for the monitor's own records).
	if s.Name != "standby1" || s.SyncState != "sync" || s.State != "streaming" || !s.Visible {
		t.Errorf("standby %+v", s)
	}
	if s.FlushBytes < r.WAL.Bytes/2 || s.ReplayBytes <= 0 || s.SentBytes < s.FlushBytes {
		t.Errorf("standby moved sent %d, flush %d, replay %d bytes; the primary wrote %d", s.SentBytes, s.FlushBytes, s.ReplayBytes, r.WAL.Bytes)
	}
	for _, iv := range r.Intervals {
		if iv.ReplayLagBytes < 0 {
			t.Errorf("interval %+v: no standby lag sampled", iv)
		}
	}
	// The standby itself serves select-only and refuses writes.
	r2 := run(t, Spec{DSN: sb.DSN("postgres"), Workload: SelectOnly, Clients: 1, Duration: 500 * time.Millisecond})
	if !r2.Server.InRecovery || r2.Transactions <= 0 || r2.Failed.Total != 0 {
		t.Errorf("select-only on the standby: recovery %v, %d transactions, %d failed", r2.Server.InRecovery, r2.Transactions, r2.Failed.Total)
	}
	if _, err := Run(context.Background(), Spec{DSN: sb.DSN("postgres"), Clients: 1, Duration: time.Second}, Observer{}); !errors.Is(err, ErrTables) {
		t.Errorf("tpcb on a standby: %v", err)
	}
}

func TestConnectErrors(t *testing.T) {
	pg, db := sharedPG.DB(t)
	port, err := pgtest.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	wrongPW := strings.Replace(pg.DSN(db), pg.Password, "wrong", 1)
	for _, c := range []struct{ dsn, want string }{
		{wrongPW, "login refused"},
		{pg.DSN("nosuchdb"), `database "nosuchdb" does not exist`},
		{"postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable", "connection refused"},
	} {
		_, err := Run(context.Background(), Spec{DSN: c.dsn, Clients: 1, Duration: time.Second}, Observer{})
		if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), pg.Password) {
			t.Errorf("%s: %v, want ErrConnect with %q", c.dsn, err, c.want)
		}
	}
}

// TestSharedPGDatabases: the tests on the shared server each get a
// database of their own, which is gone when the test ends.
func TestSharedPGDatabases(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test uses a PostgreSQL server")
	}
	var pg *pgtest.Server
	var names []string
	for _, sub := range []string{"a", "b"} {
		t.Run(sub, func(t *testing.T) {
			var db string
			pg, db = sharedPG.DB(t)
			names = append(names, db)
			// A table of the same name in each: apart, or the second fails.
			execSQL(t, pg.DSN(db), `CREATE TABLE pgbench_accounts (aid int)`)
		})
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Fatalf("databases %v, want two of their own", names)
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var left int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = ANY($1)`, names).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d of the databases %v left after their tests ended (%v)", left, names, err)
	}
}
