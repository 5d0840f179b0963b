//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/labuptest"
)

// An agent descheduled mid-mesh for longer than the agents' handshake
// deadline (3 s) and a search's patience with a silent peer (about 2.7 s),
// as an agent on a node at full CPU or in a paused VM is, is still alive,
// and its paths are healthy: the mesh must say so. node6's agent (the
// one probed, not probing, in each of its pairs) is stopped (SIGSTOP) for
// 3.5 s at a different moment of each of ten meshes of 6 nodes, one pair
// per node at once so that node6's pairs are under way for a while. Every
// path must be ok at 9000, and the stop must have met at least one run (a
// run that waited for it takes over 3 s).
func TestMeshStalledAgent(t *testing.T) {
	const n, stop = 6, 3500 * time.Millisecond
	l := up(t, "", meshTopology(n, 0), "stall")
	tok := tokenFile(t, "token", token)
	var nodes strings.Builder
	pid := 0
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node%d", i)
		_, p := labuptest.Daemon(t, node(t, l, name), exec.Command(bin, "agent", "--listen", "::", "--token-file", tok), "agent", "listening on")
		if i == n {
			pid = p
		}
		fmt.Fprintf(&nodes, "%s 198.18.10.%d 198.18.10.%d fd00:10::%d\n", name, i, i, i)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	file := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(file, []byte(nodes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	n1 := node(t, l, "node1")
	met, twice := 0, 0
	offsets := []time.Duration{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for i, at := range offsets {
		at *= time.Millisecond
		resumed := make(chan struct{})
		go func() {
			defer close(resumed)
			time.Sleep(at)
			syscall.Kill(pid, syscall.SIGSTOP)
			time.Sleep(stop)
			syscall.Kill(pid, syscall.SIGCONT)
		}()
		start := time.Now()
		out, stderr, code := run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--per-node", "1", "--json")
		took := time.Since(start)
		<-resumed
		var r meshJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("run %d: mesh --json (exit %d): %v\n%s", i+1, code, err, stderr)
		}
		if len(r.Paths) != n*(n-1)*2 {
			t.Fatalf("run %d: %d paths, want %d", i+1, len(r.Paths), n*(n-1)*2)
		}
		for _, p := range r.Paths {
			if strings.Contains(p.Detail, "searched twice") {
				twice++
			}
			if p.Error != "" || p.Verdict != "ok" || p.PathMTU != 9000 {
				t.Errorf("run %d (node6 stopped %v after the start): %s -> %s (network %d): %s %d %s", i+1, at, p.From, p.To, p.Network, p.Verdict, p.PathMTU, p.Error)
			}
		}
		if code != 0 {
			t.Errorf("run %d: exit %d, want 0", i+1, code)
		}
		if took > 3*time.Second {
			met++
		}
		t.Logf("run %d: node6 stopped %v after the start for %v; the mesh took %v", i+1, at, stop, took.Round(time.Millisecond))
	}
	t.Logf("%d of %d runs waited for the stopped agent; %d directions searched twice", met, len(offsets), twice)
	if met == 0 {
		t.Fatalf("no run waited for the stopped agent: the stop came after node6's pairs every time")
	}
}
