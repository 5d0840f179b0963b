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

	"github.com/interlink/interlink/internal/db"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/units"
)

// galeraDir is privateDir made passable by the mysql user, so the lab keeps
// its members' data below it (t.TempDir makes its directories 0700).
func galeraDir(t testing.TB) string {
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
	t.Logf("lab up galera took %v (BenchmarkUpBuiltin times it)", took)
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

	benchGalera(t, name, st)

	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	if ps := processesUnder(dir); len(ps) > 0 {
		t.Errorf("processes left after lab down: %v", ps)
	}
}

// benchGalera runs `db bench` from the client node over the three members
// and kills db3's mariadbd halfway: every member committed transactions,
// the survivors replicated and received write sets over the cluster
// network, conflicts were counted, db3 is reported lost and the run went
// on against db1 and db2.
func benchGalera(t *testing.T, name string, st lab.Status) {
	t.Helper()
	db3 := service(t, st, "db3", "galera")
	dsns := []string{"--dsn", service(t, st, "db1", "galera").DSN, "--dsn", service(t, st, "db2", "galera").DSN, "--dsn", db3.DSN}
	// The tables first, so the measured run starts at once.
	if r := run(t, append(append([]string{"lab", "exec", name, "client", "--", binary, "db", "bench"}, dsns...),
		"--init", "--table-size", "1000", "--clients", "3", "--time", "500ms")...); r.code > 1 {
		t.Fatalf("db bench --init: exit %d: %s", r.code, r.stderr)
	}
	// Galera evicts a member that stopped answering after
	// evs.suspect_timeout (5 s): the cluster waits until then, and goes on
	// with two after.
	const secs, killAt = 10, 2 * time.Second
	kill := time.AfterFunc(killAt, func() { syscall.Kill(db3.PID, syscall.SIGKILL) })
	defer kill.Stop()
	r := run(t, append(append([]string{"lab", "exec", name, "client", "--", binary, "db", "bench"}, dsns...),
		"--clients", "6", "--time", strconv.Itoa(secs)+"s", "--interval", "500ms", "--json")...)
	if r.code != 0 && r.code != 1 { // 1: some transactions failed (db3's, when it died)
		t.Fatalf("db bench: exit %d: %s", r.code, r.stderr)
	}
	var res db.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Members) != 3 || res.StoppedBy != db.StopTime || res.Galera == nil {
		t.Fatalf("members %+v, stopped by %s, galera %+v", res.Members, res.StoppedBy, res.Galera)
	}
	var conflicts int64
	for i, m := range res.Members {
		conflicts += m.Conflicts
		if m.Clients != 2 || m.Transactions <= 0 || m.Name != "db"+strconv.Itoa(i+1) {
			t.Errorf("member %s (%s): %d clients, %d transactions", m.Name, m.Address, m.Clients, m.Transactions)
		}
		if i == 2 {
			continue
		}
		g := m.Galera
		if m.Error != "" || g == nil || g.Replicated <= 0 || g.ReplicatedBytes <= 0 || g.Received <= 0 || g.ReceivedBytes <= 0 {
			t.Errorf("member %s: error %q, galera %+v", m.Name, m.Error, g)
			continue
		}
		// Each local certification failure reached one of its clients as
		// error 1213; the cluster lost db3 and is two now.
		if m.Conflicts < g.CertFailures || g.ClusterSizeStart != 3 || g.ClusterSizeEnd != 2 || g.ClusterStatus != "Primary" || m.LostAt != 0 {
			t.Errorf("member %s: %d conflicts, galera %+v, lost at %d", m.Name, m.Conflicts, g, m.LostAt)
		}
	}
	lost := res.Members[2]
	// The run started less than killAt before the kill (lab exec and the
	// connections take their time).
	if lost.LostAt <= 0 || lost.LostAt > int64(killAt+time.Second) || lost.Error == "" || lost.ConnectionLost < 1 {
		t.Errorf("db3 killed at %v: lost at %v (%q), %d connections lost, end error %q", killAt,
			time.Duration(lost.LostAt), lost.LostError, lost.ConnectionLost, lost.Error)
	}
	if last := res.Intervals[len(res.Intervals)-1]; last.Transactions <= 0 {
		t.Errorf("the run did not go on after db3: last interval %+v", last)
	}
	g := res.Galera
	if conflicts != res.Conflicts || res.Conflicts <= 0 || res.Retries > res.Conflicts || g.Members != 2 || g.ReplicatedBytesPerTx <= 0 || g.WriteSets <= 0 {
		t.Errorf("conflicts %d (members %d), retries %d; galera %+v", res.Conflicts, conflicts, res.Retries, g)
	}
	// The write sets crossed the cluster network (eth1 of the members);
	// the clients' statements stayed on the public one (the client node
	// has no eth1).
	ic := map[string]db.IfaceCost{}
	for _, n := range res.Nodes {
		for _, f := range n.Interfaces {
			ic[n.Node+"/"+f.Name] = f
		}
		if strings.HasPrefix(n.Node, "db") && n.Node != "db3" && (n.ProcessCPU == nil || *n.ProcessCPU <= 0) {
			t.Errorf("node %s: processes' cpu %s ns", n.Node, units.FormatCount(n.ProcessCPU))
		}
	}
	for _, node := range []string{"db1", "db2"} {
		if f := ic[node+"/eth1"]; f.TxBytes < uint64(res.Members[0].Galera.ReplicatedBytes)/2 || f.RxPackets == 0 {
			t.Errorf("%s eth1: tx %d bytes, rx %d packets; db1 replicated %d bytes", node, f.TxBytes, f.RxPackets, res.Members[0].Galera.ReplicatedBytes)
		}
	}
	if c := ic["client/eth0"]; c.TxPackets < uint64(res.Transactions) {
		t.Errorf("client eth0: %d packets out for %d transactions", c.TxPackets, res.Transactions)
	}
	if l := res.Lab; l == nil || l.Interfaces["eth1"].PacketsPerTx <= 0 || l.ProcessCPUPerTx == nil || *l.ProcessCPUPerTx <= 0 || l.TCPOutSegsPerTx < l.Interfaces["eth1"].PacketsPerTx/2 {
		t.Errorf("lab sums %+v", l)
	}
	t.Logf("%d tx, %.0f tps, %d conflicts (%.1f/s), %d retries, %d failed; replicated %.0f B/tx; eth1 %.1f packets/tx; db3 lost at %v: %s",
		res.Transactions, res.TPS, res.Conflicts, res.ConflictsPerSec, res.Retries, res.Failed.Total, g.ReplicatedBytesPerTx,
		res.Lab.Interfaces["eth1"].PacketsPerTx, time.Duration(lost.LostAt), lost.LostError)
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
