package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/db"
	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// TestDBBenchMySQLBadInput: each mistake is one line and exit 3, and the
// password given never appears in what is printed.
func TestDBBenchMySQLBadInput(t *testing.T) {
	s := mariatest.New(t, mariadb.Config{})
	port, err := mariadb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dsn := s.DSN()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"db", "bench", "--dsn", "mysql://interlink:" + s.Password + "@127.0.0.1:" + strconv.Itoa(port) + "/sbtest"}, "connection refused"},
		{[]string{"db", "bench", "--dsn", strings.Replace(dsn, s.Password, "wrong", 1)}, "login refused"},
		{[]string{"db", "bench", "--dsn", dsn}, "sbtest1 does not exist; run with --init"},
		{[]string{"db", "bench", "--dsn", dsn, "--workload", "tpcb"}, "MySQL runs oltp-read-write"},
		{[]string{"db", "bench", "--dsn", dsn, "--dsn", dsn}, "is given twice"},
		{[]string{"db", "bench", "--dsn", dsn, "--init", "--tables", "100"}, "--tables 100"},
		{[]string{"db", "bench", "--dsn", "mysql://interlink:" + s.Password + "@[::1"}, "missing ']'"},
		{[]string{"db", "bench", "--dsn", dsn, "--dsn", "postgres://localhost/x"}, "mixed"},
		{[]string{"db", "bench", "--dsn", "mysql://u:p@" + silentServer(t) + "/x", "--connect-timeout", "500ms"}, "no answer from the server in time (is a MySQL or MariaDB server listening there?)"},
	} {
		wantBadInput(t, c.args, c.want)
		if _, stderr, _ := run(t, c.args...); strings.Contains(stderr, s.Password) {
			t.Errorf("%v: the password in the error: %s", c.args, stderr)
		}
	}
}

// TestDBBenchMySQL runs the CLI against a standalone MariaDB, JSON and
// text, with the password from MYSQL_PWD: it appears nowhere.
func TestDBBenchMySQL(t *testing.T) {
	s := mariatest.New(t, mariadb.Config{})
	t.Setenv("MYSQL_PWD", s.Password)
	noPW := strings.Replace(s.DSN(), ":"+s.Password+"@", "@", 1)
	stdout, stderr, code := run(t, "db", "bench", "--dsn", noPW, "--init", "--table-size", "1000", "--clients", "2", "--time", "1s", "--json")
	if code != ExitOK && code != ExitWarning {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r db.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Transactions <= 0 || len(r.Members) != 1 || r.Members[0].Transactions != r.Transactions || r.Server.Product != "MariaDB" {
		t.Errorf("result: %d transactions, members %+v", r.Transactions, r.Members)
	}
	out, _, _ := run(t, "db", "bench", "--dsn", s.DSN(), "--clients", "2", "--time", "1s")
	for _, want := range []string{"interlink db bench 127.0.0.1:", "(MariaDB 10.", "oltp-read-write, 1 table(s) of 1000 rows, 2 client(s) over 1 server(s)",
		"[db]", "conflicts:", "server ", "2 client(s) at the start", "network lo", "cpu host"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(stdout+out, s.Password) {
		t.Error("the password is in the output")
	}
}
