//go:build linux

package labtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlink/interlink/internal/db"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/pgserver"
)

// pgDir is privateDir made reachable by the postgres user, whose data
// directories live below it (t.TempDir makes its directories 0700).
func pgDir(t testing.TB) string {
	t.Helper()
	if _, err := pgserver.Find(); err != nil {
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

// labDoc is the part of `lab status --json` these tests read.
type labDoc struct {
	Labs []lab.Status `json:"labs"`
}

func service(t *testing.T, s lab.Status, node, kind string) lab.ServiceStatus {
	t.Helper()
	for _, n := range s.Nodes {
		for _, sv := range n.Services {
			if n.Name == node && sv.Kind == kind {
				return sv
			}
		}
	}
	t.Fatalf("lab %s: no %s service on node %s", s.Name, kind, node)
	return lab.ServiceStatus{}
}

// processesUnder lists live processes whose command line names dir (a
// lab's state directory): its PostgreSQL servers and agents.
func processesUnder(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmd), dir) {
			out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
		}
	}
	return out
}

// connectIn opens a pgx connection from inside node n (sockets made there
// stay in its namespace).
func connectIn(t *testing.T, n *lab.Node, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := n.Do(func() error {
			var err error
			c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect from %s: %v", n.Name(), err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestPGLab brings the built-in pg up as `lab up` does, commits on the
// primary and reads it on the standby, runs `db bench` from the client
// node and checks its counters, runs a logon storm with and without
// `interlink gate` (stormThroughGate), and takes the lab down.
func TestPGLab(t *testing.T) {
	dir := pgDir(t)
	name := prefix + "-pg"
	t.Cleanup(func() { run(t, "lab", "down", name) })
	t0 := time.Now()
	r := run(t, "lab", "up", "pg", "--name", name, "--json")
	took := time.Since(t0)
	if r.code != 0 {
		t.Fatalf("lab up pg: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("lab up pg took %v (BenchmarkUpBuiltin times it)", took)
	var doc labDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab up --json: %v: %s", err, r.stdout)
	}
	st := doc.Labs[0]
	for _, n := range st.Nodes {
		for _, sv := range n.Services {
			if sv.State != lab.ServiceRunning || sv.PID == 0 {
				t.Errorf("node %s service %s: state %s, pid %d", n.Name, sv.Kind, sv.State, sv.PID)
			}
		}
	}
	primary, standby := service(t, st, "primary", "postgres"), service(t, st, "standby", "postgres")
	if primary.Address != "198.18.99.1:5432" || !strings.HasPrefix(primary.DSN, "postgres://postgres:") || !strings.Contains(primary.DSN, "@198.18.99.1:5432/") {
		t.Fatalf("primary: address %s, dsn %s", primary.Address, primary.DSN)
	}
	if a := service(t, st, "client", "agent"); a.TokenFile == "" || a.Address != "198.18.99.9:7471" {
		t.Errorf("client agent: %+v", a)
	} else if fi, err := os.Stat(a.TokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file %s: %v %v", a.TokenFile, fi, err)
	}

	l, err := lab.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	client, err := l.Node("client")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pc, sc := connectIn(t, client, primary.DSN), connectIn(t, client, standby.DSN)
	// The standby replicates over the interconnect, synchronously.
	var app, addr, sync string
	err = pc.QueryRow(ctx, `SELECT application_name, host(client_addr), sync_state FROM pg_stat_replication`).Scan(&app, &addr, &sync)
	if err != nil || app != "standby" || addr != "198.18.10.2" || sync != "sync" {
		t.Fatalf("pg_stat_replication: %s %s %s, %v; want standby from 198.18.10.2, sync", app, addr, sync, err)
	}
	// A commit that waits for the standby to apply it is visible there at
	// once.
	mark := time.Now().UnixNano()
	if _, err := pc.Exec(ctx, `SET synchronous_commit = remote_apply`); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, `CREATE TABLE t3_mark (v bigint); INSERT INTO t3_mark VALUES (`+strconv.FormatInt(mark, 10)+`)`); err != nil {
		t.Fatal(err)
	}
	var got int64
	if err := sc.QueryRow(ctx, `SELECT v FROM t3_mark`).Scan(&got); err != nil || got != mark {
		t.Fatalf("standby: %d, %v; want %d", got, err, mark)
	}

	// db bench from the client node against the primary's DSN.
	r = run(t, "lab", "exec", name, "client", "--", binary, "db", "bench", "--dsn", primary.DSN,
		"--init", "--workload", "simple-update", "--clients", "4", "--time", "1s", "--json")
	if r.code != 0 {
		t.Fatalf("db bench: exit %d: %s", r.code, r.stderr)
	}
	var res db.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Transactions <= 0 || res.Failed.Total != 0 {
		t.Errorf("transactions %d, failed %d", res.Transactions, res.Failed.Total)
	}
	if len(res.Standbys) != 1 {
		t.Fatalf("standbys: %+v", res.Standbys)
	}
	sb := res.Standbys[0]
	// Every commit waited for the standby's flush: what it flushed and
	// replayed moved with the WAL the primary wrote (not less than half of
	// it: the WAL position is cluster-wide, the standby's sampled a moment
	// later), and never beyond it by more than the lag at the start.
	if sb.SyncState != "sync" || sb.ReplayBytes <= 0 || sb.FlushBytes < res.WAL.Bytes/2 || sb.ReplayBytes > res.WAL.Bytes+1<<20 {
		t.Errorf("standby %s: flushed %d, replayed %d of %d WAL bytes", sb.SyncState, sb.FlushBytes, sb.ReplayBytes, res.WAL.Bytes)
	}
	// The replication stream crossed the interconnect: the primary's eth1
	// sent at least the WAL the standby received; the client's traffic
	// stayed on the public network.
	ic := map[string]db.IfaceCost{}
	for _, n := range res.Nodes {
		for _, f := range n.Interfaces {
			ic[n.Node+"/"+f.Name] = f
		}
	}
	if p := ic["primary/eth1"]; p.TxBytes == 0 || p.TxBytes < uint64(sb.SentBytes) || p.RxPackets == 0 {
		t.Errorf("primary eth1: tx %d bytes (standby sent %d WAL bytes), rx %d packets", p.TxBytes, sb.SentBytes, p.RxPackets)
	}
	if s := ic["standby/eth1"]; s.RxBytes < uint64(sb.SentBytes) {
		t.Errorf("standby eth1: rx %d bytes, standby sent %d WAL bytes", s.RxBytes, sb.SentBytes)
	}
	if c := ic["client/eth0"]; c.TxPackets < uint64(res.Transactions) {
		t.Errorf("client eth0: %d packets out for %d transactions", c.TxPackets, res.Transactions)
	}
	t.Logf("%d tx, %.0f tps; WAL %d B; primary eth1 tx %d B in %d packets",
		res.Transactions, res.TPS, res.WAL.Bytes, ic["primary/eth1"].TxBytes, ic["primary/eth1"].TxPackets)

	// The logon storm runs in this lab too: one pg lab up and down fewer.
	t.Run("storm through gate", func(t *testing.T) { stormThroughGate(t, name) })

	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	if ps := processesUnder(dir); len(ps) > 0 {
		t.Errorf("processes left after lab down: %v", ps)
	}
}

// TestPGLabKilledMidStart kills `lab up pg` (SIGKILL) with the primary and
// the agents running and the standby recorded but not started, then
// checks that lab down removes every process, namespace and file.
func TestPGLabKilledMidStart(t *testing.T) {
	dir := pgDir(t)
	name := prefix + "-pgkill"
	// Service points: 3 agents, the primary, then the standby (5).
	cmd := startPaused(t, name, lab.PointService, 5, "pg")
	if ps := processesUnder(dir); len(ps) < 4 {
		t.Fatalf("before the kill: want the primary and 3 agents running, got %v", ps)
	}
	killHelper(cmd)
	if r := run(t, "lab", "status", name); r.code != 1 || !strings.Contains(r.stdout, "incomplete") {
		t.Errorf("lab status after the kill: exit %d: %s", r.code, r.stdout)
	}
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	if ps := processesUnder(dir); len(ps) > 0 {
		t.Errorf("processes left after lab down: %v", ps)
	}

	// The same with a kill at an arbitrary moment of a real `lab up`.
	for _, after := range []time.Duration{700 * time.Millisecond, 1500 * time.Millisecond} {
		up := exec.Command(binary, "lab", "up", "pg", "--name", name)
		if err := up.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		up.Process.Signal(syscall.SIGKILL)
		up.Wait()
		if r := run(t, "lab", "down", name); r.code != 0 {
			t.Fatalf("lab down after a kill at %v: %d %s", after, r.code, r.stderr)
		}
		nothingLeft(t, name, dir)
		if ps := processesUnder(dir); len(ps) > 0 {
			t.Errorf("kill at %v: processes left after lab down: %v", after, ps)
		}
	}
}

// TestPGLabMissingPostgres: without PostgreSQL's server binaries, Up says
// in one line how to install them and creates nothing.
func TestPGLabMissingPostgres(t *testing.T) {
	dir := privateDir(t)
	saved := pgserver.BinDirs
	pgserver.BinDirs = nil
	t.Cleanup(func() { pgserver.BinDirs = saved })
	t.Setenv("PATH", t.TempDir())
	topo, err := lab.Load("pg")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = prefix + "-pgmissing"
	_, err = lab.Up(context.Background(), topo)
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y postgresql") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("lab up without PostgreSQL: %v", err)
	}
	t.Log(err)
	nothingLeft(t, topo.Name, dir)
}
