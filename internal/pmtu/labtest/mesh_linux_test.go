//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// meshTopology is n nodes on one 9000 switch; bad, when not 0, is the node
// whose switch port was left at 1500.
func meshTopology(n, bad int) string {
	var b strings.Builder
	b.WriteString("name: t4-mesh\nswitches:\n  ic: {mtu: 9000}\nnodes:\n")
	for i := 1; i <= n; i++ {
		port := ""
		if i == bad {
			port = ", port_mtu: 1500"
		}
		fmt.Fprintf(&b, "  node%d:\n    links:\n      - {name: eth1, switch: ic, addresses: [198.18.10.%d/24, fd00:10::%d/64]%s}\n", i, i, i, port)
	}
	return b.String()
}

// startMesh brings up the lab, starts an agent on every node, writes a
// nodes file with two networks (IPv4 and IPv6) and returns it.
func startMesh(t *testing.T, suffix string, n, bad int) (*lab.Lab, string, string) {
	t.Helper()
	l := up(t, "", meshTopology(n, bad), suffix)
	tok := tokenFile(t, "token", token)
	var nodes strings.Builder
	nodes.WriteString("# name  agent  interconnect addresses (network 1: IPv4, 2: IPv6)\n")
	for i := 1; i <= n; i++ {
		agent(t, node(t, l, fmt.Sprintf("node%d", i)), "::", tok)
		fmt.Fprintf(&nodes, "node%d 198.18.10.%d 198.18.10.%d fd00:10::%d\n", i, i, i, i)
	}
	file := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(file, []byte(nodes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return l, file, tok
}

type meshJSON struct {
	Schema   string `json:"schema"`
	PerNode  int    `json:"per_node"`
	Networks int    `json:"networks"`
	Paths    []struct {
		From, To    string
		Network     int    `json:"network"`
		Verdict     string `json:"verdict"`
		PathMTU     int    `json:"path_mtu"`
		MeetsExpect *bool  `json:"meets_expect"`
		Error       string `json:"error"`
		Detail      string `json:"detail"`
	} `json:"paths"`
	ElapsedNS int64 `json:"elapsed_ns"`
}

// Five nodes, node4's switch port at 1500: exactly node4's paths (to and
// from it, on both networks) are blackholes at 1500; all others are 9000.
func TestMesh(t *testing.T) {
	l, file, tok := startMesh(t, "mesh", 5, 4)
	n1 := node(t, l, "node1")
	out, _, code := run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--json")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	var r meshJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mesh --json: %v", err)
	}
	if r.Schema != "interlink.mesh/v1" || r.PerNode != 4 || r.Networks != 2 || len(r.Paths) != 40 {
		t.Fatalf("schema %s, %d per node, %d networks, %d paths; want 4 per node, 2 networks, 40 paths", r.Schema, r.PerNode, r.Networks, len(r.Paths))
	}
	var bad []string
	for _, p := range r.Paths {
		involves4 := p.From == "node4" || p.To == "node4"
		switch {
		case p.Error != "":
			t.Errorf("%s -> %s (network %d): %s", p.From, p.To, p.Network, p.Error)
		case involves4 && (p.Verdict != "blackhole" || p.PathMTU != 1500 || *p.MeetsExpect):
			t.Errorf("%s -> %s (network %d): %s %d, want blackhole 1500", p.From, p.To, p.Network, p.Verdict, p.PathMTU)
		case !involves4 && (p.Verdict != "ok" || p.PathMTU != 9000 || !*p.MeetsExpect):
			t.Errorf("%s -> %s (network %d): %s %d, want ok 9000", p.From, p.To, p.Network, p.Verdict, p.PathMTU)
		}
		if p.Verdict != "ok" {
			bad = append(bad, fmt.Sprintf("%d:%s>%s", p.Network, p.From, p.To))
		}
	}
	sort.Strings(bad)
	if len(bad) != 16 {
		t.Errorf("%d problem paths, want 16 (node4 to and from 4 nodes, 2 networks): %v", len(bad), bad)
	}
	t.Logf("mesh of 5 nodes, 2 networks: %s", time.Duration(r.ElapsedNS))
	// The human matrix marks exactly node4's row and column.
	out, _, _ = run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000")
	if !strings.Contains(out, "problem paths (16 of 40)") || strings.Count(out, "1500!") != 16 {
		t.Errorf("human report:\n%s", out)
	}
}

// Eight healthy nodes: every path 9000, well under 20 s.
func TestMeshEight(t *testing.T) {
	l, file, tok := startMesh(t, "mesh8", 8, 0)
	start := time.Now()
	out, _, code := run(t, node(t, l, "node1"), "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--json")
	took := time.Since(start)
	var r meshJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mesh --json: %v", err)
	}
	if code != 0 || r.PerNode != 4 || len(r.Paths) != 112 {
		t.Fatalf("exit %d, %d per node, %d paths; want 0, 4, 112", code, r.PerNode, len(r.Paths))
	}
	t.Logf("mesh of 8 nodes, 2 networks, 112 paths: %s (process %s)", time.Duration(r.ElapsedNS), took)
}
