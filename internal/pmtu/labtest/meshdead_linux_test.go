//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/interlink/interlink/internal/mesh"
)

// Agents that never answer: in node1's namespace, 198.18.10.91-93 get
// permanent neighbour entries with a MAC nobody has, so every SYN to them
// leaves onto the lab switch and is never answered (no RST, no ICMP, no
// ARP failure). With a refused port beside them, mesh contacts each dead
// agent once, in parallel, lists it once with its cause, schedules only the
// live nodes, and a --timeout shorter than a dead contact cuts the run and
// says so.
func TestMeshDeadAgents(t *testing.T) {
	l, _, tok := startMesh(t, "meshdead", 3, 0)
	n1 := node(t, l, "node1")
	err := n1.Do(func() error {
		link, err := netlink.LinkByName("eth1")
		if err != nil {
			return err
		}
		for i := 91; i <= 93; i++ {
			err := netlink.NeighSet(&netlink.Neigh{LinkIndex: link.Attrs().Index, State: netlink.NUD_PERMANENT,
				IP: net.IPv4(198, 18, 10, byte(i)), HardwareAddr: net.HardwareAddr{2, 0, 0, 0, 0x99, byte(i)}})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("blackhole neighbours in node1: %v", err)
	}
	var b strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, "node%d 198.18.10.%d\n", i, i)
	}
	for i := 91; i <= 93; i++ {
		fmt.Fprintf(&b, "silent%d 198.18.10.%d\n", i, i)
	}
	b.WriteString("closed 198.18.10.2:1\n") // node2 answers with a RST there
	file := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	out, errOut, code := run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--json")
	took := time.Since(start)
	var r mesh.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mesh --json: %v (stderr %s)", err, errOut)
	}
	tried, measured, dead, stopped := r.Counts()
	if code != 1 || r.Stopped != "" || r.PerNode != mesh.DefaultPerNode || tried != 6 || measured != 6 || dead != 36 || stopped != 0 {
		t.Errorf("exit %d, stopped %q, %d per node, %d tried, %d measured, %d not tried, %d stopped", code, r.Stopped, r.PerNode, tried, measured, dead, stopped)
	}
	causes := map[string]string{}
	for _, u := range r.Unreachable {
		if _, twice := causes[u.Node]; twice {
			t.Errorf("%s listed twice", u.Node)
		}
		causes[u.Node] = u.Cause
	}
	for _, n := range []string{"silent91", "silent92", "silent93"} {
		if causes[n] != "no answer (timed out)" {
			t.Errorf("%s: cause %q", n, causes[n])
		}
	}
	if !strings.HasPrefix(causes["closed"], "connection refused") || len(causes) != 4 {
		t.Errorf("unreachable: %v", causes)
	}
	// The three silent contacts run together: one 5 s handshake timeout,
	// not one per path (that was 3 per round, for 7 rounds, when pairs ran in rounds).
	if took > 12*time.Second {
		t.Errorf("took %s", took)
	}
	t.Logf("7 nodes, 3 silent and 1 refused: %s", took)

	// A 2 s timeout, shorter than a silent contact: cut, said, exit 3.
	start = time.Now()
	out, errOut, code = run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--timeout", "2s", "--json")
	took = time.Since(start)
	r = mesh.Result{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mesh --json: %v (stderr %s)", err, errOut)
	}
	_, _, _, stopped = r.Counts()
	if code != 3 || r.Stopped != "--timeout 2s reached" || stopped < 6 || !strings.Contains(errOut, "stopped early (--timeout 2s reached)") {
		t.Errorf("exit %d, stopped %q, %d paths not measured, stderr %q", code, r.Stopped, stopped, errOut)
	}
	if took > 4*time.Second {
		t.Errorf("a 2s timeout ended after %s", took)
	}
}
