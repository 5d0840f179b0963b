//go:build linux

package labtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/mariadb"
)

// galeraDir is privateDir made passable by the mysql user, so the lab keeps
// its members' data below it (t.TempDir makes its directories 0700).
func galeraDir(t *testing.T) string {
	t.Helper()
	if _, err := mariadb.Find(true); err != nil {
		t.Fatal(err)
	}
	dir := privateDir(t)
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// mysqlIn opens a database handle whose connections are made inside node
// n, to the mysql:// DSN lab status gave.
func mysqlIn(t *testing.T, n *lab.Node, dsn string) *sql.DB {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	cfg.Timeout = 5 * time.Second
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := n.Do(func() error {
			var err error
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// upGalera runs `lab up galera` as a user would and returns its status.
func upGalera(t *testing.T, name string) lab.Status {
	t.Helper()
	t.Cleanup(func() { run(t, "lab", "down", name) })
	t0 := time.Now()
	r := run(t, "lab", "up", "galera", "--name", name, "--json")
	took := time.Since(t0)
	if r.code != 0 {
		t.Fatalf("lab up galera: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("lab up galera took %v", took)
	if took > 60*time.Second {
		t.Errorf("lab up galera took %v, want under 60s", took)
	}
	var doc labDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab up --json: %v: %s", err, r.stdout)
	}
	return doc.Labs[0]
}

// TestGaleraLab brings the built-in galera up as `lab up` does: three
// members Synced in one primary component, running as mysql; a row
// written on db1 is read on db3; lab down leaves no process, namespace or
// data directory.
func TestGaleraLab(t *testing.T) {
	dir := galeraDir(t)
	name := prefix + "-galera"
	st := upGalera(t, name)
	for _, n := range st.Nodes {
		for _, sv := range n.Services {
			if sv.State != lab.ServiceRunning || sv.PID == 0 {
				t.Errorf("node %s service %s: state %s, pid %d", n.Name, sv.Kind, sv.State, sv.PID)
			}
		}
	}
	mysqlUID := ""
	for i, node := range []string{"db1", "db2", "db3"} {
		sv := service(t, st, node, "galera")
		addr := "198.18.99." + string(rune('1'+i)) + ":3306"
		if sv.Address != addr || !strings.HasPrefix(sv.DSN, "mysql://interlink:") || !strings.HasSuffix(sv.DSN, "@"+addr+"/sbtest") {
			t.Errorf("%s: address %s, dsn %s", node, sv.Address, sv.DSN)
		}
		if !strings.Contains(sv.Detail, "Synced, 3 members, Primary") || !strings.HasPrefix(sv.Dir, dir) {
			t.Errorf("%s: detail %q, dir %s", node, sv.Detail, sv.Dir)
		}
		status, err := os.ReadFile("/proc/" + strconv.Itoa(sv.PID) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
				if f[1] == "0" || (mysqlUID != "" && f[1] != mysqlUID) {
					t.Errorf("%s: mariadbd runs as uid %s", node, f[1])
				}
				mysqlUID = f[1]
			}
		}
	}
	if r := run(t, "lab", "status", name); r.code != 0 || strings.Count(r.stdout, "dsn db") != 3 {
		t.Errorf("lab status: exit %d:\n%s", r.code, r.stdout)
	}

	l, err := lab.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	client := node(t, l, "client")
	db1 := mysqlIn(t, client, service(t, st, "db1", "galera").DSN)
	db3 := mysqlIn(t, client, service(t, st, "db3", "galera").DSN)
	ctx := context.Background()
	mark := time.Now().UnixNano()
	if _, err := db1.ExecContext(ctx, "CREATE TABLE t3_mark (id INT PRIMARY KEY, v BIGINT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db1.ExecContext(ctx, "INSERT INTO t3_mark VALUES (1, ?)", mark); err != nil {
		t.Fatal(err)
	}
	// A commit on db1 returns once the cluster certified it; db3 applies
	// it asynchronously, and wsrep_sync_wait makes the read wait for that.
	var got int64
	conn, err := db3.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT v FROM t3_mark WHERE id = 1").Scan(&got); err != nil || got != mark {
		t.Fatalf("db3 read %d, %v; want %d written on db1", got, err, mark)
	}
	var fromAddr string
	if err := conn.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_INCOMING_ADDRESSES'").Scan(&fromAddr); err != nil {
		t.Fatal(err)
	}
	t.Logf("wsrep_incoming_addresses %s", fromAddr)

	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	if ps := processesUnder(dir); len(ps) > 0 {
		t.Errorf("processes left after lab down: %v", ps)
	}
}

// TestGaleraLabKilledMidStart kills `lab up galera` (SIGKILL) with db1
// bootstrapped and db2 recorded but not started, and at arbitrary moments
// of a real `lab up` (during a state transfer), in a state directory the
// mysql user cannot pass (the data then lives under lab.UserDataRoot):
// lab down removes every process, namespace and data directory.
func TestGaleraLabKilledMidStart(t *testing.T) {
	if _, err := mariadb.Find(true); err != nil {
		t.Fatal(err)
	}
	dir := privateDir(t) // 0700: the lab uses lab.UserDataRoot
	name := prefix + "-galerakill"
	data := func() []string {
		m, _ := filepath.Glob(filepath.Join(lab.UserDataRoot, name+"-*"))
		return m
	}
	left := func(when string) {
		t.Helper()
		nothingLeft(t, name, dir)
		if d := data(); len(d) > 0 {
			t.Errorf("%s: data directory left: %v", when, d)
		}
		for _, d := range []string{dir, lab.UserDataRoot} {
			if ps := processesUnder(d + "/" + name); len(ps) > 0 {
				t.Errorf("%s: processes left after lab down: %v", when, ps)
			}
		}
	}
	// Service points: 4 agents, db1 (5th), db2 (6th).
	cmd := startPaused(t, name, lab.PointService, 6, "galera")
	if ps := processesUnder(lab.UserDataRoot + "/" + name); len(ps) != 1 || !strings.Contains(ps[0], "--wsrep-new-cluster") {
		t.Fatalf("before the kill: want db1's mariadbd running, got %v", ps)
	}
	killHelper(cmd)
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	left("paused at db2")

	for _, after := range []time.Duration{2 * time.Second, 7 * time.Second} {
		up := exec.Command(binary, "lab", "up", "galera", "--name", name)
		if err := up.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		up.Process.Signal(syscall.SIGKILL)
		up.Wait()
		running := processesUnder(lab.UserDataRoot + "/" + name)
		if r := run(t, "lab", "down", name); r.code != 0 {
			t.Fatalf("lab down after a kill at %v: %d %s", after, r.code, r.stderr)
		}
		t.Logf("killed at %v with %d mariadbd running", after, len(running))
		left("kill at " + after.String())
	}
}

// TestGaleraLabMissing: without MariaDB and Galera, Up says in one line
// how to install them and creates nothing.
func TestGaleraLabMissing(t *testing.T) {
	dir := privateDir(t)
	saved, savedP := mariadb.BinDirs, mariadb.Providers
	mariadb.BinDirs, mariadb.Providers = nil, nil
	t.Cleanup(func() { mariadb.BinDirs, mariadb.Providers = saved, savedP })
	t.Setenv("PATH", t.TempDir())
	topo, err := lab.Load("galera")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = prefix + "-galeramissing"
	_, err = lab.Up(context.Background(), topo)
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y mariadb-server galera-4 rsync") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("lab up without MariaDB: %v", err)
	}
	t.Log(err)
	nothingLeft(t, topo.Name, dir)
}
