//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
)

// topology: an ops node (where interlink cluster runs) and four cluster
// nodes on a public network (SSH, agents), each with an interconnect on a
// 9000 switch where node3's port was left at 1500.
const topology = `name: t16-cl
switches:
  pub: {mtu: 1500}
  ic: {mtu: 9000}
nodes:
  ops:
    links:
      - {name: eth0, switch: pub, addresses: [198.18.0.100/24]}
%s`

func clusterTopology() string {
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		port := ""
		if i == 3 {
			port = ", port_mtu: 1500"
		}
		fmt.Fprintf(&b, "  node%d:\n    links:\n      - {name: eth0, switch: pub, addresses: [198.18.0.%d/24]}\n"+
			"      - {name: eth1, switch: ic, addresses: [198.18.10.%d/24, fd00:10::%d/64]%s}\n", i, i, i, i, port)
	}
	return fmt.Sprintf(topology, b.String())
}

type env struct {
	l        *lab.Lab
	ops      *lab.Node
	nodes    []*lab.Node // node1..node4
	hostKeys []labuptest.Key
	client   labuptest.Key
	sshd     map[string]int // node -> sshd PID
	tmp      []string       // the TMPDIR of each sshd's sessions
	dir      string
}

// setup brings the lab up with sshd in node1..node3 (node4's is down).
func setup(t *testing.T) *env {
	topo, err := lab.Parse("t16-cl.yaml", []byte(clusterTopology()))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{l: labuptest.Up(t, topo), client: labuptest.NewKey(t), sshd: map[string]int{}, dir: t.TempDir()}
	e.ops = labuptest.Node(t, e.l, "ops")
	for i := 1; i <= 4; i++ {
		n := labuptest.Node(t, e.l, fmt.Sprintf("node%d", i))
		e.nodes = append(e.nodes, n)
		e.hostKeys = append(e.hostKeys, labuptest.NewKey(t))
		if i <= 3 {
			pid, tmp := labuptest.SSHD(t, n, fmt.Sprintf("198.18.0.%d", i), e.hostKeys[i-1], e.client)
			e.sshd[n.Name()], e.tmp = pid, append(e.tmp, tmp)
		}
	}
	write(t, filepath.Join(e.dir, "id"), string(e.client.Private), 0o600)
	return e
}

// knownHosts writes a known_hosts file with the given line per node.
func (e *env) knownHosts(t *testing.T, name string, lines ...string) string {
	return write(t, filepath.Join(e.dir, name), strings.Join(lines, "\n")+"\n", 0o644)
}

func (e *env) hostLine(i int, k labuptest.Key) string {
	return fmt.Sprintf("198.18.0.%d %s", i, k.Authorized())
}

// leftovers lists what a run left: processes in the nodes other than
// sshd's listener, and interlink-cluster temp dirs. It waits up to 5 s for
// sshd's session processes to exit.
func (e *env) leftovers(t *testing.T) []string {
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = nil
		for _, n := range e.nodes {
			for _, pid := range nodeProcs(t, n) {
				if pid != e.sshd[n.Name()] {
					left = append(left, fmt.Sprintf("%s: PID %d %s", n.Name(), pid, cmdline(pid)))
				}
			}
		}
		left = append(left, e.glob("interlink-cluster.*")...)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// glob matches pattern in each node's session TMPDIR.
func (e *env) glob(pattern string) []string {
	var all []string
	for _, tmp := range e.tmp {
		m, _ := filepath.Glob(filepath.Join(tmp, pattern))
		all = append(all, m...)
	}
	return all
}

type pathKey struct {
	net      int
	from, to string
}

func matrix(ps []mesh.Path) map[pathKey]string {
	m := map[pathKey]string{}
	for _, p := range ps {
		m[pathKey{p.Network, p.From, p.To}] = fmt.Sprintf("%s %d", p.Verdict, p.PathMTU)
	}
	return m
}

func findings(r *rules.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %s", f.Severity, f.Rule, f.Object))
	}
	sort.Strings(out)
	return out
}

// Three nodes reached over SSH, node4's sshd down: the cluster run gives
// the mesh matrix and check findings that running mesh and check by hand
// give, reports node4 unreachable (refused) while the others go on, and
// leaves no process or temp dir on any node.
func TestCluster(t *testing.T) {
	e := setup(t)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]),
		e.hostLine(3, e.hostKeys[2]), e.hostLine(4, e.hostKeys[3]))
	inv := write(t, filepath.Join(e.dir, "hosts.ini"), `# an Ansible inventory
[rac]
node[1:4] ansible_user=root

[rac:vars]
ansible_port=22

[all:vars]
ansible_python_interpreter=/usr/bin/python3
`, 0o644)
	var ini strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&ini, "node%d ansible_host=198.18.0.%d interconnect=198.18.10.%d,fd00:10::%d\n", i, i, i, i)
	}
	// Host variables in a second section of the same group, as Ansible allows.
	inv = write(t, inv, strings.Replace(string(must(os.ReadFile(inv))), "node[1:4] ansible_user=root\n", ini.String(), 1), 0o644)
	before := e.leftovers(t)
	if len(before) > 0 {
		t.Fatalf("leftovers before the run: %v", before)
	}

	out, _, code := run(t, e.ops, "cluster", "--inventory", inv, "--ssh-config", "none", "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--expect", "9000", "--collect", e.dir, "--json")
	if code != 2 {
		t.Errorf("exit %d, want 2 (node3's paths are below --expect 9000)", code)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cluster --json: %v", err)
	}
	if res.Schema != cluster.Schema || len(res.Nodes) != 4 {
		t.Fatalf("schema %q, %d nodes", res.Schema, len(res.Nodes))
	}
	for _, n := range res.Nodes[:3] {
		if n.Status != cluster.StatusOK || n.Check == nil || !n.Cleanup.Done || n.Binary == "" || n.Bundle == "" {
			t.Errorf("%s: status %s, check %v, cleanup %+v, binary %q, bundle %q: %s", n.Name, n.Status, n.Check != nil, n.Cleanup, n.Binary, n.Bundle, n.Error)
		}
		// 0644 as check --collect leaves it, not a temporary file's 0600.
		if st, err := os.Stat(n.Bundle); n.Bundle != "" && (err != nil || st.Mode().Perm() != 0o644) {
			t.Errorf("%s: bundle: %v %v", n.Name, st.Mode(), err)
		}
	}
	if n4 := res.Nodes[3]; n4.Status != cluster.StatusUnreachable || n4.Cause != cluster.CauseRefused || !n4.Cleanup.Done {
		t.Errorf("node4: status %s cause %q (%s), want unreachable refused", n4.Status, n4.Cause, n4.Error)
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if res.Mesh == nil || len(res.Mesh.Paths) != 12 {
		t.Fatalf("mesh %+v (skipped: %s), want 12 paths (3 nodes, 2 networks)", res.Mesh, res.MeshSkipped)
	}

	// The same by hand: agents on node1..3, mesh from ops, check on each.
	tok := write(t, filepath.Join(e.dir, "token"), "t16-hand-token-0123456789abcdef\n", 0o600)
	var nodesFile strings.Builder
	var stops []func()
	for i, n := range e.nodes[:3] {
		log := &syncBuf{}
		_, stop, _ := start(t, n, log, "agent", "--listen", "0.0.0.0:7472", "--token-file", tok)
		stops = append(stops, stop)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("agent in %s: %s", n.Name(), log)
			}
		}
		fmt.Fprintf(&nodesFile, "node%d 198.18.0.%d:7472 198.18.10.%d fd00:10::%d\n", i+1, i+1, i+1, i+1)
	}
	nf := write(t, filepath.Join(e.dir, "nodes"), nodesFile.String(), 0o644)
	hand, _, _ := run(t, e.ops, "mesh", "--nodes", nf, "--token-file", tok, "--expect", "9000", "--json")
	for _, stop := range stops {
		stop()
	}
	var hm mesh.Result
	if err := json.Unmarshal([]byte(hand), &hm); err != nil {
		t.Fatalf("mesh --json: %v", err)
	}
	got, want := matrix(res.Mesh.Paths), matrix(hm.Paths)
	if len(want) != 12 {
		t.Fatalf("by hand: %d paths", len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("network %d %s -> %s: cluster %q, by hand %q", k.net, k.from, k.to, got[k], w)
		}
		if wantBad := k.from == "node3" || k.to == "node3"; wantBad != (w != "ok 9000") {
			t.Errorf("network %d %s -> %s by hand: %s", k.net, k.from, k.to, w)
		}
	}
	for i, n := range e.nodes[:3] {
		out, _, _ := run(t, n, "check", "--json")
		var r rules.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("check --json in %s: %v", n.Name(), err)
		}
		if g, w := findings(res.Nodes[i].Check), findings(&r); !slices.Equal(g, w) {
			t.Errorf("%s findings: cluster %v, by hand %v", n.Name(), g, w)
		}
		if len(r.Findings) == 0 {
			t.Errorf("%s: check found nothing (the comparison proves little)", n.Name())
		}
	}

	// The human report of the run tells the unreachable node apart from
	// failing paths: cluster.WriteText, which the command prints without
	// --json (TestClusterInterrupt and TestClusterStall run that path), of
	// this run's JSON rather than of a second run of 10 s.
	var text strings.Builder
	if err := cluster.WriteText(&text, &res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"unreachable (refused)", "node4: dial tcp 198.18.0.4:22", "problem paths (8 of 12)", "1500!"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Every way a node can be unreachable, each named: an unknown host key, a
// changed host key (refused, never accepted), a key not authorized, no
// sshd, no answer.
func TestClusterUnreachable(t *testing.T) {
	e := setup(t)
	other := labuptest.NewKey(t)
	kh := e.knownHosts(t, "known_hosts",
		// node1 absent: unknown
		e.hostLine(2, other), // node2: changed
		e.hostLine(3, e.hostKeys[2]),
		e.hostLine(4, e.hostKeys[3]))
	write(t, filepath.Join(e.dir, "wrong_id"), string(labuptest.NewKey(t).Private), 0o600)
	inv := write(t, filepath.Join(e.dir, "inventory.yaml"), fmt.Sprintf(`all:
  vars:
    ansible_user: root
  children:
    rac:
      hosts:
        node1: {ansible_host: 198.18.0.1}
        node2: {ansible_host: 198.18.0.2}
        node3: {ansible_host: 198.18.0.3, ansible_ssh_private_key_file: %s}
        node4: {ansible_host: 198.18.0.4}
        ghost: {ansible_host: 198.18.0.99}
`, filepath.Join(e.dir, "wrong_id")), 0o644)
	out, stderr, code := run(t, e.ops, "cluster", "--inventory", inv, "--ssh-config", "none", "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--connect-timeout", "1s", "--json")
	if code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s", err, stderr)
	}
	want := map[string]struct{ cause, text string }{
		"node1": {cluster.CauseHostKey, "is not in known_hosts"},
		"node2": {cluster.CauseHostKey, "host key CHANGED"},
		"node3": {cluster.CauseAuth, "unable to authenticate"},
		"node4": {cluster.CauseRefused, "connection refused"},
		"ghost": {cluster.CauseTimeout, ""},
	}
	for _, n := range res.Nodes {
		w := want[n.Name]
		if n.Status != cluster.StatusUnreachable || n.Cause != w.cause || !strings.Contains(n.Error, w.text) {
			t.Errorf("%s: %s (%s) %q, want unreachable (%s) with %q", n.Name, n.Status, n.Cause, n.Error, w.cause, w.text)
		}
		if strings.Contains(n.Error, "\n") {
			t.Errorf("%s: error of several lines: %q", n.Name, n.Error)
		}
	}
	if res.Mesh != nil || !strings.Contains(res.MeshSkipped, "0 started") {
		t.Errorf("mesh %v, skipped %q", res.Mesh != nil, res.MeshSkipped)
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Ctrl-C once every agent listens: the run stops, reports what ran, and
// still stops every agent and removes every temp dir.
func TestClusterInterrupt(t *testing.T) {
	e := setup(t)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]), e.hostLine(3, e.hostKeys[2]))
	out := &syncBuf{}
	cmd, _, done := start(t, e.ops, out, "cluster", "198.18.0.1/198.18.10.1", "198.18.0.2/198.18.10.2", "198.18.0.3/198.18.10.3",
		"--ssh-config", "none", "--known-hosts", kh, "--identity", filepath.Join(e.dir, "id"))
	listening := func() int {
		logs := e.glob("interlink-cluster.*/agent.log")
		n := 0
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), "listening on") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(90 * time.Second); listening() < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agents not all listening after 90s:\n%s", out)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	var code int
	select {
	case <-done:
		code = cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		t.Fatalf("cluster did not exit 60s after Ctrl-C:\n%s", out)
	}
	t.Logf("after Ctrl-C (exit %d):\n%s", code, out)
	if code != 3 || !strings.Contains(out.String(), "STOPPED EARLY") || !strings.Contains(out.String(), "stopped early") {
		t.Errorf("exit %d, want 3 and the report saying it stopped early", code)
	}
	if strings.Count(out.String(), "nothing (removed /") != 3 {
		t.Errorf("not every node reports its temp dir removed")
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
