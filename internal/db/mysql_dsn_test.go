package db

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestParseMySQL(t *testing.T) {
	ts, err := parseMySQL([]string{"mysql://u:p%40ss@h1:3307,h2,[fd00::1]:3308,[fd00::2]/db?tls=false", "MariaDB://u:x@10.0.0.1"}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range ts {
		got = append(got, tg.addr+" "+tg.cfg.User+" "+tg.cfg.Passwd+" "+tg.cfg.DBName+" "+tg.cfg.Timeout.String())
	}
	want := []string{"h1:3307 u p@ss db 3s", "h2:3306 u p@ss db 3s", "[fd00::1]:3308 u p@ss db 3s", "[fd00::2]:3306 u p@ss db 3s", "10.0.0.1:3306 u x sbtest 3s"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("targets\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The password may come from MYSQL_PWD instead of the command line.
	t.Setenv("MYSQL_PWD", "fromenv")
	if ts, err := parseMySQL([]string{"mysql://u@h/db"}, time.Second); err != nil || ts[0].cfg.Passwd != "fromenv" {
		t.Errorf("MYSQL_PWD: %v %+v", err, ts)
	}
	for _, c := range []struct{ dsn, want string }{
		{"mysql://a:hunter2@[::1", "missing ']'"},
		{"mysql://a:hunter2 x@h/db", "invalid userinfo"},
		{"mysql://:hunter2@h/db", "no user"},
		{"mysql://a:hunter2@h:99999/db", `port "99999"`},
		{"mysql://a:hunter2@h:x/db", `port "x"`},
		{"mysql://a:hunter2@fd00::1/db", "brackets"},
		{"mysql://a:hunter2@h1,,h2/db", `host ""`},
		{"mysql://a:hunter2@h/db/x", "one name after the host"},
		{"mysql://a:hunter2@h/db?sslmode=disable", `parameter "sslmode"`},
		{"mysql://a:hunter2@h/db?tls=maybe", "tls=maybe"},
		{"mysql://a:hunter2@h,h/db", "h:3306 is given twice"},
	} {
		_, err := parseMySQL([]string{c.dsn}, time.Second)
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q and no password", c.dsn, err, c.want)
		}
	}
}

func TestNormalizeMySQL(t *testing.T) {
	base := Spec{Clients: 3, Duration: time.Second}
	s := base
	s.DSNs = []string{"mysql://u:p@h1,h2,h3/db"}
	s.Init = true
	n, err := s.Normalize()
	if err != nil || n.Workload != OLTPReadWrite || n.Tables != DefaultTables || n.TableSize != DefaultTableSize || n.DSN != s.DSNs[0] || !n.MySQL() {
		t.Fatalf("%+v %v", n, err)
	}
	if again, err := n.Normalize(); err != nil || len(again.DSNs) != 1 {
		t.Errorf("Normalize twice: %+v %v", again.DSNs, err)
	}
	for _, c := range []struct {
		change func(*Spec)
		want   string
	}{
		{func(s *Spec) { s.Clients = 2 }, "--clients 2: fewer than the 3 servers"},
		{func(s *Spec) { s.Workload = TPCB }, `--workload "tpcb": MySQL runs oltp-read-write`},
		{func(s *Spec) { s.Scale = 2 }, "--scale is pgbench's"},
		{func(s *Spec) { s.Tables = 65 }, "--tables 65"},
		{func(s *Spec) { s.Tables, s.TableSize = 10, 2_000_000 }, "--table-size 2000000"},
		{func(s *Spec) { s.Init, s.Tables = false, 2 }, "--tables and --table-size are for --init"},
		{func(s *Spec) { s.DSNs = append(s.DSNs, "postgres://h/db") }, "mixed"},
	} {
		s := base
		s.DSNs, s.Init = []string{"mysql://u:p@h1,h2,h3/db"}, true
		c.change(&s)
		if _, err := s.Normalize(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", s, err, c.want)
		}
	}
	// PostgreSQL takes one server and its own workloads.
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{DSNs: []string{"postgres://h/a", "postgres://h/b"}, Clients: 1, Duration: time.Second}, "PostgreSQL takes one server"},
		{Spec{DSNs: []string{"postgres://h/a", "mysql://u@h/b"}, Clients: 1, Duration: time.Second}, "mixed"},
		{Spec{DSN: "postgres://h/a", Workload: OLTPReadWrite, Clients: 1, Duration: time.Second}, "is for MySQL"},
		{Spec{DSN: "postgres://h/a", Init: true, Tables: 2, Clients: 1, Duration: time.Second}, "--tables and --table-size are for MySQL"},
		// A negative timeout was taken silently as the default.
		{Spec{DSN: "postgres://h/a", Clients: 1, Duration: time.Second, ConnectTimeout: -time.Second}, "--connect-timeout -1s: want a positive duration"},
	} {
		if _, err := c.spec.Normalize(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// FuzzParseMySQL: whatever follows the password, parsing never panics, a
// target's address is HOST:PORT, and an error never holds the password.
func FuzzParseMySQL(f *testing.F) {
	for _, s := range []string{"h:3306/db", "h1,h2:3307,[fd00::1]/db?tls=true", "[::1", "h/db/x", "h:x", "h,,h", "h/db?a=b", "@h", "h%zz/db"} {
		f.Add(s)
	}
	const pw = "Pw-7f3a9c"
	f.Fuzz(func(t *testing.T, rest string) {
		if strings.Contains(rest, pw) {
			return
		}
		ts, err := parseMySQL([]string{"mysql://user:" + pw + "@" + rest}, time.Second)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("%q: the password in the error: %v", rest, err)
			}
			return
		}
		for _, tg := range ts {
			if _, _, err := net.SplitHostPort(tg.addr); err != nil {
				t.Fatalf("%q: target address %q: %v", rest, tg.addr, err)
			}
		}
	})
}
