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

	"github.com/interlink/interlink/internal/lab"
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

	// While it runs, the most connects to the silent agents node1 has in
	// SYN_SENT at once.
	start := time.Now()
	stop, most := make(chan struct{}), make(chan int)
	go func() {
		m := 0
		for {
			select {
			case <-stop:
				most <- m
				return
			case <-time.After(20 * time.Millisecond):
				m = max(m, silentConnects(n1))
			}
		}
	}()
	out, errOut, code := run(t, n1, "mesh", "--nodes", file, "--token-file", tok, "--expect", "9000", "--json")
	close(stop)
	together := <-most
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
	// not one per path (that was 3 per round, for 7 rounds, when pairs ran
	// in rounds), seen as three connects waiting at once.
	if together != 3 {
		t.Errorf("at most %d connects to the 3 silent agents waited at once, want 3 (contacted together)", together)
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
	t.Logf("a 2s timeout ended the run after %s", took)
}

// silentConnects counts n's TCP sockets in SYN_SENT to 198.18.10.91-93
// (/proc/net/tcp's rem_address is the address's bytes, little-endian).
func silentConnects(n *lab.Node) int {
	var data []byte
	n.Do(func() error {
		var err error
		data, err = os.ReadFile("/proc/thread-self/net/tcp")
		return err
	})
	count := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "02" { // SYN_SENT
			continue
		}
		for _, ip := range []string{"5B0A12C6:", "5C0A12C6:", "5D0A12C6:"} {
			if strings.HasPrefix(f[2], ip) {
				count++
			}
		}
	}
	return count
}
