package cli

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/db"
	"github.com/interlink/interlink/internal/pgtest"
)

// wantBadInput asserts the one-line error and exit 3 of bad input.
func wantBadInput(t *testing.T, args []string, want string) {
	t.Helper()
	stdout, stderr, code := run(t, args...)
	if code != ExitUnknown || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || stdout != "" {
		t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line with %q", args, code, stdout, stderr, want)
	}
	if strings.Contains(stderr, "goroutine") {
		t.Errorf("%v: stack trace: %s", args, stderr)
	}
}

// silentServer listens on a free port of loopback and accepts
// connections without ever answering, until the test ends; it returns
// the address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestDBBenchBadInput: each mistake is one line and exit 3, and the
// password never appears in an error. Parallel, as TestDBBench: most of it
// is waiting for its own server to start.
func TestDBBenchBadInput(t *testing.T) {
	t.Parallel()
	pg := pgtest.New(t, pgtest.Config{Settings: map[string]string{"fsync": "off"}})
	dsn := pg.DSN("postgres")
	port, err := pgtest.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"db", "bench"}, "--dsn is required"},
		{[]string{"db", "bench", "extra", "--dsn", dsn}, `db bench: unexpected argument "extra"`},
		{[]string{"db", "bogus"}, `db: unknown subcommand "bogus"`},
		{[]string{"db", "bench", "--dsn", dsn, "--connect-timeout", "-1s"}, "--connect-timeout -1s"},
		// A port that accepts and never answers.
		{[]string{"db", "bench", "--dsn", "postgres://u:p@" + silentServer(t) + "/x", "--connect-timeout", "500ms"}, "no answer within 500ms (connect timeout; is a PostgreSQL server listening there?)"},
		{[]string{"db", "bench", "--dsn", dsn, "--clients", "0"}, "--clients 0"},
		{[]string{"db", "bench", "--dsn", dsn, "--time", "0"}, "--time 0s"},
		{[]string{"db", "bench", "--dsn", dsn, "--time", "2h"}, "at most 1h"},
		{[]string{"db", "bench", "--dsn", dsn, "--workload", "tpcc"}, `--workload "tpcc"`},
		{[]string{"db", "bench", "--dsn", dsn, "--init", "--scale", "5000"}, "--scale 5000"},
		{[]string{"db", "bench", "--dsn", "postgres://a:b@[::1"}, "--dsn"},
		{[]string{"db", "bench", "--dsn", "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"}, "connection refused"},
		{[]string{"db", "bench", "--dsn", strings.Replace(dsn, pg.Password, "wrong", 1)}, "login refused"},
		{[]string{"db", "bench", "--dsn", pg.DSN("nosuchdb")}, `database "nosuchdb" does not exist`},
		{[]string{"db", "bench", "--dsn", dsn}, "pgbench_accounts does not exist; run with --init"},
	} {
		wantBadInput(t, c.args, c.want)
	}
	// The password never appears in an error.
	_, stderr, _ := run(t, "db", "bench", "--dsn", "postgres://postgres:hunter2@[::1")
	if strings.Contains(stderr, "hunter2") {
		t.Errorf("password in the error: %s", stderr)
	}
}

// TestDBBenchLabFromEnv: a lab named by $INTERLINK_LAB (lab exec sets it)
// that does not exist is blamed on the variable, not on a --lab the
// command line does not have; --lab given wins over it.
func TestDBBenchLabFromEnv(t *testing.T) {
	t.Setenv("INTERLINK_LAB", "nosuchlab")
	dsn := "postgres://u@127.0.0.1:1/x"
	wantBadInput(t, []string{"db", "bench", "--dsn", dsn}, "db bench: $INTERLINK_LAB=nosuchlab: lab nosuchlab: no such lab")
	wantBadInput(t, []string{"db", "bench", "--dsn", dsn, "--lab", "otherlab"}, "db bench: --lab otherlab: lab otherlab: no such lab")
}

// TestDBBench: JSON and text against a server of its own, and Ctrl-C.
// Parallel: it waits for its server, a 1 s run and the 1.5 s before the
// cancel, and judges no figure against the clock.
func TestDBBench(t *testing.T) {
	t.Parallel()
	pg := pgtest.New(t, pgtest.Config{Settings: map[string]string{"fsync": "off"}})
	stdout, stderr, code := run(t, "db", "bench", "--dsn", pg.DSN("postgres"), "--init", "--clients", "2", "--time", "1s", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r db.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Schema != "interlink.db/v1" || r.Transactions <= 0 || r.WAL.Bytes <= 0 || r.Failed.Total != 0 {
		t.Errorf("result: schema %s, %d transactions, %d WAL bytes, %d failed", r.Schema, r.Transactions, r.WAL.Bytes, r.Failed.Total)
	}
	// Text, and Ctrl-C: it stops, still reports, and exits 3.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	code, out, _ := runCLI(ctx, "db", "bench", "--dsn", pg.DSN("postgres"), "--clients", "2", "--time", "1m")
	for _, want := range []string{"interlink db bench 127.0.0.1:", "[db]", "tps (stopped by interrupted)", "wal:", "network lo", "cpu host", "interrupted: the figures cover"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if code != ExitUnknown {
		t.Errorf("interrupted run: exit %d, want 3", code)
	}
}
