//go:build linux

package labtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/gc"
)

// TestClusterBenchGC: cluster --bench gc over the lab cluster (node3's
// interconnect port left at 1500 on the 9000 switch, node4's sshd down).
// One bench --mode gc runs from node1 over node1..node3 on their
// interconnect addresses; node4 is named and not measured; every pair with
// node3 loses its 8 KiB blocks (one 9000-byte frame each, which node3's
// port drops) and receives none, the pair of node1 and node2 loses none
// (it moves only tens of blocks: two thirds of its requesters' slots
// spend the run waiting out node3's lost blocks, as a RAC session stalls
// on "gc cr block lost"); the text and the HTML report carry the gc run.
func TestClusterBenchGC(t *testing.T) {
	e := setup(t)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]),
		e.hostLine(3, e.hostKeys[2]), e.hostLine(4, e.hostKeys[3]))
	var ini strings.Builder
	ini.WriteString("[rac]\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&ini, "node%d ansible_host=198.18.0.%d ansible_user=root interconnect=198.18.10.%d,fd00:10::%d\n", i, i, i, i)
	}
	inv := write(t, filepath.Join(e.dir, "hosts.ini"), ini.String(), 0o644)
	html := filepath.Join(e.dir, "cluster.html")
	out, stderr, code := run(t, e.ops, "cluster", "--inventory", inv, "--ssh-config", "none", "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--bench", "gc", "--bench-time", "2s", "--html", html, "--json")
	if code != 2 {
		t.Errorf("exit %d, want 2 (node3's blocks are lost: the gc run fails)\n%s", code, stderr)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s", err, stderr)
	}
	g := res.GC
	if g == nil || res.Bench != nil {
		t.Fatalf("gc %+v, bench %+v", g, res.Bench)
	}
	t.Logf("gc from %s, network %d, %v, not run %v, took %v: %s", g.Node, g.Network, g.Addrs, g.NotRun, g.Elapsed, g.Error)
	if g.Node != "node1" || g.Network != 1 || len(g.Addrs) != 3 || g.Addrs["node2"] != "198.18.10.2" {
		t.Errorf("gc from %s on network %d at %v, want node1 on network 1 at the interconnect addresses", g.Node, g.Network, g.Addrs)
	}
	if len(g.NotRun) != 1 || !strings.HasPrefix(g.NotRun[0], "node4: unreachable") {
		t.Errorf("not run: %v, want node4 named", g.NotRun)
	}
	r := g.Report
	if r == nil || r.Schema != gc.Schema || len(r.Nodes) != 3 || len(r.Pairs) != 6 {
		t.Fatalf("gc report %+v: %s", r, g.Error)
	}
	for _, n := range r.Nodes {
		if want := "198.18.10." + n.Name[4:]; !strings.HasPrefix(n.Addr, want+":") {
			t.Errorf("%s: data endpoint %s, want on %s", n.Name, n.Addr, want)
		}
	}
	for _, p := range r.Pairs {
		t.Logf("%s <- %s: %.0f blocks/s, requested %d, received %d, lost %d", p.Requester, p.Server, p.BlocksPerSec, p.Requested, p.Received, p.Lost)
		if hole := p.Requester == "node3" || p.Server == "node3"; hole && (p.Lost == 0 || p.Received != 0) || !hole && (p.Lost != 0 || p.Received == 0 || p.Received != p.Requested || p.TwoWay == nil) {
			t.Errorf("%s <- %s: received %d, lost %d", p.Requester, p.Server, p.Received, p.Lost)
		}
	}
	if len(r.Pings) != 9 || r.Verdict != gc.VerdictFailed {
		t.Errorf("%d ping rows, verdict %s; want 9, failed", len(r.Pings), r.Verdict)
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	var text bytes.Buffer
	cluster.WriteText(&text, &res)
	t.Logf("text report:\n%s", text.String())
	for _, s := range []string{"bench gc, 2s, every node at once on interconnect network 1; run from node1", "not in the run: node4: unreachable (refused)",
		"198.18.10.1 <- 198.18.10.2", "pairs that lost blocks: node1 <- node3", "Interconnect Ping Latency Stats", "verdict: failed"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	page := string(must(os.ReadFile(html)))
	for _, s := range []string{"bench gc: 3 nodes at once, interconnect network 1", "not in the run: node4", "Interconnect Ping Latency Stats", `class="chart heatmap`} {
		if !strings.Contains(page, s) {
			t.Errorf("--html page lacks %q", s)
		}
	}
}
