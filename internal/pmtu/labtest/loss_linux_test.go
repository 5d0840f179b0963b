//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lossyMeshTopology is n nodes on one 9000 switch whose every port drops
// loss of the frames at random, both ways.
func lossyMeshTopology(n int, loss string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: t4-loss\nswitches:\n  ic: {mtu: 9000, loss: %s}\nnodes:\n", loss)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  node%d:\n    links:\n      - {name: eth1, switch: ic, addresses: [198.18.10.%d/24, fd00:10::%d/64]}\n", i, i, i)
	}
	return b.String()
}

// Random loss is never read as a blackhole. Every switch port drops 1 % of
// frames each way, so each direction of every path meets the loss twice
// (about 2 % of probes, and 2 % of their acks); 4 meshes of 8 nodes on two
// networks search 448 directions. A search that read one lost probe of the
// largest size as a limit would call about 4 % of them (18 expected) a
// blackhole; this one must call every one ok at 9000, and must have seen
// the loss (lost probes counted).
func TestMeshLossIsNotBlackhole(t *testing.T) {
	const n, runs = 8, 4
	l := up(t, "", lossyMeshTopology(n, "1%"), "loss")
	tok := tokenFile(t, "token", token)
	var nodes strings.Builder
	for i := 1; i <= n; i++ {
		agent(t, node(t, l, fmt.Sprintf("node%d", i)), "::", tok)
		fmt.Fprintf(&nodes, "node%d 198.18.10.%d 198.18.10.%d fd00:10::%d\n", i, i, i, i)
	}
	file := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(file, []byte(nodes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	n1 := node(t, l, "node1")
	directions, lost, probes := 0, 0, 0
	start := time.Now()
	for run1 := 1; run1 <= runs; run1++ {
		out, stderr, code := run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--timeout", "1m", "--json")
		var r struct {
			Paths []struct {
				From, To, Verdict, Error, Detail string
				Network                          int
				PathMTU                          int `json:"path_mtu"`
				Lost, Probes                     int
			} `json:"paths"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("run %d: mesh --json (exit %d): %v\n%s", run1, code, err, stderr)
		}
		if len(r.Paths) != n*(n-1)*2 {
			t.Fatalf("run %d: %d paths, want %d", run1, len(r.Paths), n*(n-1)*2)
		}
		for _, p := range r.Paths {
			if p.Error != "" || p.Verdict != "ok" || p.PathMTU != 9000 {
				t.Errorf("run %d: %s -> %s (network %d): %s %d %s%s", run1, p.From, p.To, p.Network, p.Verdict, p.PathMTU, p.Detail, p.Error)
			}
			directions++
			lost += p.Lost
			probes += p.Probes
		}
		if code != 0 {
			t.Errorf("run %d: exit %d, want 0", run1, code)
		}
	}
	if lost == 0 {
		t.Fatalf("%d probes over 1 %% lossy ports and none counted lost: the loss was not there", probes)
	}
	t.Logf("%d directions over 1 %% lossy ports, all ok at 9000; %d of %d probes lost; %s", directions, lost, probes, time.Since(start).Round(time.Millisecond))
}
