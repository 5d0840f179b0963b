package db

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// checkMySQLRun asserts what every MySQL run must show; a conflict is
// retried, so only transactions that exhausted their tries (or lost
// their connection) fail.
func checkMySQLRun(t *testing.T, r *Result) {
	t.Helper()
	if r.Schema != Schema || r.Transactions <= 0 || r.TPS <= 0 || r.Server.Product != "MariaDB" {
		t.Fatalf("schema %q, %d transactions, %.1f tps, product %q", r.Schema, r.Transactions, r.TPS, r.Server.Product)
	}
	l := r.Latency
	if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P99 && l.P99 <= l.Max) {
		t.Errorf("latency percentiles out of order: %+v", l)
	}
	var sum, retries, committed, conflicts int64
	for _, iv := range r.Intervals {
		sum += iv.Transactions
		retries += iv.Retries
	}
	for _, m := range r.Members {
		committed += m.Transactions
		conflicts += m.Conflicts
	}
	if sum != r.Transactions || committed != r.Transactions {
		t.Errorf("intervals hold %d transactions, servers %d, the total is %d", sum, committed, r.Transactions)
	}
	// Every conflict was retried or, after MaxTries, failed as a deadlock
	// (or ended with the run).
	if retries != r.Retries || conflicts != r.Conflicts || r.Retries > r.Conflicts || r.Conflicts > r.Retries+r.Failed.Total+r.CancelledAtEnd {
		t.Errorf("retries %d (intervals %d), conflicts %d (servers %d), failed %d", r.Retries, retries, r.Conflicts, conflicts, r.Failed.Total)
	}
}

func myDSNs(servers ...*mariadb.Server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.DSN())
	}
	return out
}

// TestMySQLStandalone runs oltp-read-write against one MariaDB: init, a
// run over the tables as they are, and the run's counters.
func TestMySQLStandalone(t *testing.T) {
	s := mariatest.New(t, mariadb.Config{})
	r := run(t, Spec{DSN: s.DSN(), Init: true, TableSize: 2000, Tables: 2, Clients: 4, Duration: 2 * time.Second, Interval: 500 * time.Millisecond})
	checkMySQLRun(t, r)
	if r.Server.Tables != 2 || r.Server.TableSize != 2000 || !r.Server.TablesCreatedByInterlink || r.Server.InitBytes <= 0 {
		t.Errorf("server %+v", r.Server)
	}
	if len(r.Members) != 1 || r.Members[0].Clients != 4 || r.Members[0].Galera != nil || r.Galera != nil || r.Members[0].LostAt != 0 {
		t.Errorf("members %+v, galera %+v", r.Members, r.Galera)
	}
	// 18 statements and BEGIN/COMMIT cross loopback per transaction.
	if lo := r.Local; lo.Interface != "lo" || lo.TCPOutSegs < 20*r.Transactions {
		t.Errorf("local %s: %d segments out for %d transactions", lo.Interface, lo.TCPOutSegs, r.Transactions)
	}
	t.Logf("%d tx, %.0f tps, %d conflicts, p99 %v", r.Transactions, r.TPS, r.Conflicts, time.Duration(r.Latency.P99))

	// Without --init the tables are found as they are, and the rows kept
	// (every delete is followed by its insert).
	r2 := run(t, Spec{DSN: s.DSN(), Clients: 2, Duration: time.Minute, MaxTransactions: 300})
	checkMySQLRun(t, r2)
	if r2.Transactions != 300 || r2.Server.Tables != 2 || r2.Server.TableSize != 2000 || r2.Server.InitDuration != 0 {
		t.Errorf("second run: %d transactions, server %+v", r2.Transactions, r2.Server)
	}
}

// TestMySQLErrors: bad logins, unreachable servers, missing and foreign
// tables give ErrConnect or ErrTables, never the password.
func TestMySQLErrors(t *testing.T) {
	s := mariatest.New(t, mariadb.Config{})
	port, err := mariadb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dsn  string
		kind error
		want string
	}{
		{strings.Replace(s.DSN(), s.Password, "wrong", 1), ErrConnect, "login refused"},
		{"mysql://interlink:" + s.Password + "@127.0.0.1:" + strconv.Itoa(port) + "/sbtest", ErrConnect, "connection refused"},
		{strings.Replace(s.DSN(), "/sbtest", "/nosuchdb", 1), ErrConnect, "Unknown database 'nosuchdb'"},
		{s.DSN(), ErrTables, "sbtest1 does not exist; run with --init"},
	} {
		_, err := Run(context.Background(), Spec{DSN: c.dsn, Clients: 1, Duration: time.Second}, Observer{})
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), s.Password) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v, want %v with %q", err, c.kind, c.want)
		}
	}
	// --init refuses a table interlink did not make, and leaves it.
	ctx := context.Background()
	db := open(t, s)
	if _, err := db.ExecContext(ctx, "CREATE TABLE sbtest1 (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, Spec{DSN: s.DSN(), Init: true, Clients: 1, Duration: time.Second}, Observer{})
	if !errors.Is(err, ErrTables) || !strings.Contains(err.Error(), "sbtest1 exists and was not created by interlink") {
		t.Errorf("--init over a foreign table: %v", err)
	}
	if _, err := db.ExecContext(ctx, "SELECT COUNT(*) FROM sbtest1"); err != nil {
		t.Errorf("the foreign table is gone: %v", err)
	}
}

// TestMySQLServerLost spreads clients over two servers and kills one
// mid-run: it is reported lost, its clients go on against the other, and
// the run ends by time with transactions on both.
func TestMySQLServerLost(t *testing.T) {
	a, b := mariatest.New(t, mariadb.Config{}), mariatest.New(t, mariadb.Config{})
	for _, s := range []*mariadb.Server{a, b} {
		run(t, Spec{DSN: s.DSN(), Init: true, TableSize: 1000, Clients: 1, Duration: 100 * time.Millisecond})
	}
	time.AfterFunc(1500*time.Millisecond, func() { syscall.Kill(b.PID, syscall.SIGKILL) })
	r := run(t, Spec{DSNs: myDSNs(a, b), Clients: 4, Duration: 3 * time.Second, Interval: 500 * time.Millisecond})
	if r.StoppedBy != StopTime {
		t.Errorf("stopped by %s", r.StoppedBy)
	}
	ma, mb := r.Members[0], r.Members[1]
	if ma.Clients != 2 || mb.Clients != 2 || ma.Transactions <= 0 || mb.Transactions <= 0 {
		t.Errorf("servers: %+v %+v", ma, mb)
	}
	if mb.LostAt < int64(time.Second) || mb.LostAt > int64(2500*time.Millisecond) || mb.ConnectionLost < 1 || mb.Error == "" || ma.LostAt != 0 {
		t.Errorf("lost server: lost at %v (%d connections, %q), end error %q; other lost at %v", time.Duration(mb.LostAt), mb.ConnectionLost, mb.LostError, mb.Error, time.Duration(ma.LostAt))
	}
	// The run went on: the last interval committed, all on a.
	last := r.Intervals[len(r.Intervals)-1]
	if last.Transactions <= 0 || r.Failed.ConnectionLost < 1 {
		t.Errorf("last interval %+v, failed %+v", last, r.Failed)
	}
	if len(r.Errors) == 0 || !strings.Contains(strings.Join(r.Errors, " "), b.DSN()[strings.LastIndex(b.DSN(), "@")+1:strings.LastIndex(b.DSN(), "/")]) {
		t.Errorf("errors %v do not name the lost server", r.Errors)
	}
	t.Logf("a %d tx, b %d tx (lost at %v: %s)", ma.Transactions, mb.Transactions, time.Duration(mb.LostAt), mb.LostError)
}

// open is a handle on s's database over its socket.
func open(t *testing.T, s *mariadb.Server) *sql.DB {
	t.Helper()
	c, err := s.Connector()
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}
