//go:build linux

package mariadb_test

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// TestStandalone starts a server, logs in over TCP with the account Start
// made, writes and reads a row, and stops it by PID.
func TestStandalone(t *testing.T) {
	t0 := time.Now()
	s := mariatest.New(t, mariadb.Config{})
	t.Logf("standalone server up in %v", time.Since(t0))
	if !strings.HasPrefix(s.DSN(), "mysql://interlink:") || !strings.HasSuffix(s.DSN(), "/sbtest") {
		t.Errorf("DSN %s", s.DSN())
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = s.SQLUser, s.Password, "tcp", "127.0.0.1:"+itoa(s.Port), s.Database
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE t (v INT PRIMARY KEY)", "INSERT INTO t VALUES (42)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Fatalf("read back %d, %v", v, err)
	}
	// The init file that held the password's hash is gone; the server
	// runs as mysql, not root.
	if _, err := os.Stat(s.Dir + "/run/init.sql"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("init file left: %v", err)
	}
	st, err := os.ReadFile("/proc/" + itoa(s.PID) + "/status")
	if err != nil || !strings.Contains(string(st), "\nUid:\t"+uidOf(t, "mysql")+"\t") {
		t.Errorf("mariadbd %d does not run as mysql: %v", s.PID, err)
	}
	// A wrong password is refused.
	cfg.Passwd = "wrong"
	bad, _ := sql.Open("mysql", cfg.FormatDSN())
	defer bad.Close()
	var me *mysql.MySQLError
	if err := bad.PingContext(ctx); !errors.As(err, &me) || me.Number != 1045 {
		t.Errorf("wrong password: %v", err)
	}
	pid := s.PID
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if mariadb.PID(s.Dir, pid) != 0 {
		t.Errorf("mariadbd %d still there", pid)
	}
	// Stopping again, or a PID that is not the server, does nothing.
	if err := mariadb.Stop(time.Second, mariadb.Target{Dir: s.Dir, PID: os.Getpid()}); err != nil {
		t.Error(err)
	}
}

// TestMissing: without the programs, Start says how to install them.
func TestMissing(t *testing.T) {
	saved, savedP := mariadb.BinDirs, mariadb.Providers
	t.Cleanup(func() { mariadb.BinDirs, mariadb.Providers = saved, savedP })
	mariadb.BinDirs, mariadb.Providers = nil, nil
	t.Setenv("PATH", t.TempDir())
	for _, galera := range []bool{false, true} {
		if _, err := mariadb.Find(galera); !errors.Is(err, mariadb.ErrMissing) {
			t.Errorf("Find(%v): %v", galera, err)
		}
	}
	_, err := mariadb.Start(context.Background(), mariadb.Config{Dir: t.TempDir() + "/m"})
	if !errors.Is(err, mariadb.ErrMissing) || !strings.Contains(err.Error(), "apt-get install -y mariadb-server galera-4 rsync") {
		t.Errorf("Start: %v", err)
	}
	// The provider alone missing.
	mariadb.BinDirs = saved
	t.Setenv("PATH", "/usr/sbin:/usr/bin")
	if _, err := mariadb.Find(false); err != nil {
		if testing.Short() {
			t.Skipf("-short: the provider-alone half needs MariaDB installed: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := mariadb.Find(true); !errors.Is(err, mariadb.ErrMissing) {
		t.Errorf("Find(galera) without the provider: %v", err)
	}
}

func TestDSN(t *testing.T) {
	got := mariadb.DSN(netip.MustParseAddr("198.18.99.1"), 3306, "interlink", "p@ss/w", "sbtest")
	if got != "mysql://interlink:p%40ss%2Fw@198.18.99.1:3306/sbtest" {
		t.Errorf("DSN %s", got)
	}
	if got := mariadb.DSN(netip.MustParseAddr("fd00::1"), 3306, "u", "p", "d"); got != "mysql://u:p@[fd00::1]:3306/d" {
		t.Errorf("DSN %s", got)
	}
}
