//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

const token = "t16w-lab-token-0123456789abcdef"

// The built-in blackhole lab (node2's switch port at 1500, everything else
// 9000), an agent with --metrics in each node and a watch in node1:
//   - each agent's findings are exactly those `interlink check` reports in
//     the same node;
//   - 12000-byte UDP datagrams node1 -> node3 are fragmented by node1 and
//     reassembled by node3; 10000-byte ones node1 -> node2 lose their
//     9000-byte first fragment at node2's port, so node2's reassembly
//     fails (after its ipfrag_time, set to 1 s here): the counters show it;
//   - the watch exports a round-trip summary for every path, node to node.
func TestAgentAndWatchMetrics(t *testing.T) {
	topo, err := lab.Load("blackhole")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = "t16w-metrics"
	l := labuptest.Up(t, topo)
	var nodes []*lab.Node
	var urls []string
	for _, name := range []string{"node1", "node2", "node3"} {
		nodes = append(nodes, labuptest.Node(t, l, name))
	}
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	// A fragment whose partner never comes is dropped after ipfrag_time
	// (30 s by default; per network namespace).
	if err := n2.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/ipfrag_time", []byte("1\n"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	var nodesFile strings.Builder
	for _, n := range nodes {
		a := n.Addr("ic", 4).String()
		labuptest.Daemon(t, n, exec.Command(bin, "agent", "--listen", a, "--token-file", tok,
			"--metrics", a+":9472", "--check-interval", "10s"), "agent", "metrics on")
		urls = append(urls, "http://"+a+":9472/metrics")
		fmt.Fprintf(&nodesFile, "%s %s %s\n", n.Name(), a, a)
	}

	t.Run("findings", func(t *testing.T) { checkFindings(t, n1, urls[0]) })

	before := make([]families, 3)
	for i, n := range nodes {
		before[i] = scrape(t, n, urls[i])
	}
	const count = 20
	sendUDP(t, n1, n3.Addr("ic", 4), 12000, count)
	sendUDP(t, n1, n2.Addr("ic", 4), 10000, count)
	after := make([]families, 3)
	delta := func(i int, name string) float64 {
		b, _ := before[i].value(name, nil)
		a, ok := after[i].value(name, nil)
		if !ok {
			t.Errorf("%s: no %s", nodes[i].Name(), name)
		}
		return a - b
	}
	// node2 fails the reassemblies one ipfrag_time later.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(250 * time.Millisecond) { // only against a hang
		for i, n := range nodes {
			after[i] = scrape(t, n, urls[i])
		}
		if delta(1, "interlink_ip_reassembly_failures_total") >= count || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range []struct {
		node int
		name string
		min  float64
		max  float64
	}{
		{0, "interlink_ip_fragmented_ok_total", 2 * count, 2 * count},     // every datagram, both peers
		{0, "interlink_ip_fragments_created_total", 4 * count, 4 * count}, // two fragments each (9000 + the rest)
		{0, "interlink_ip_reassembly_required_total", 0, 0},
		{2, "interlink_ip_reassembly_required_total", 2 * count, 2 * count},
		{2, "interlink_ip_reassembly_ok_total", count, count},
		{2, "interlink_ip_reassembly_failures_total", 0, 0},
		{1, "interlink_ip_reassembly_required_total", count, count}, // only the last fragments arrive
		{1, "interlink_ip_reassembly_ok_total", 0, 0},
		{1, "interlink_ip_reassembly_failures_total", count, count},
		{1, "interlink_ip_reassembly_timeouts_total", count, count},
	} {
		d := delta(c.node, c.name)
		t.Logf("%s %s +%v", nodes[c.node].Name(), c.name, d)
		if d < c.min || d > c.max {
			t.Errorf("%s: %s rose by %v, want %v to %v", nodes[c.node].Name(), c.name, d, c.min, c.max)
		}
	}

	t.Run("watch", func(t *testing.T) { checkWatch(t, nodes, tok, nodesFile.String()) })
	if v, _ := scrape(t, n1, urls[0]).value("interlink_agent_sessions_total", nil); v < 2 {
		t.Errorf("node1's agent_sessions_total %v after a watch round (a session per pair it tests, and the peers')", v)
	}
}

// checkFindings compares the agent's findings gauge with `interlink check
// --json` run in the same node.
func checkFindings(t *testing.T, n *lab.Node, url string) {
	var fams families
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		fams = scrape(t, n, url)
		if _, ok := fams.value("interlink_check_last_run_timestamp_seconds", nil); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never ran its audit")
		}
	}
	out, _, code := labuptest.Exec(t, n, exec.Command(bin, "check", "--json"), time.Minute)
	var res struct {
		Findings []struct{ Rule, Severity string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code == 3 {
		t.Fatalf("check --json: exit %d: %v", code, err)
	}
	want := map[string]float64{}
	for _, f := range res.Findings {
		want[f.Rule+" "+f.Severity]++
	}
	got := map[string]float64{}
	for _, m := range fams["interlink_check_findings"].GetMetric() {
		if v := m.GetGauge().GetValue(); v != 0 {
			l := labels(m)
			got[l["rule"]+" "+l["severity"]] = v
		}
	}
	if len(want) == 0 {
		t.Fatalf("check found nothing in %s: nothing to compare", n.Name())
	}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
		t.Errorf("agent findings %v, check --json %v", sorted(got), sorted(want))
	}
	t.Logf("%s findings: %v; %d series in all", n.Name(), sorted(got), len(fams["interlink_check_findings"].GetMetric()))
}

func sorted(m map[string]float64) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(out)
	return out
}

// sendUDP sends n datagrams of size bytes of payload from node to dst
// (port 9, discard: reassembly happens before the port is looked up),
// letting the kernel fragment them. The socket is not connected, so the
// port-unreachable errors that come back do not fail later sends.
func sendUDP(t *testing.T, node *lab.Node, dst netip.Addr, size, n int) {
	t.Helper()
	err := node.Do(func() error {
		c, err := net.ListenUDP("udp4", nil)
		if err != nil {
			return err
		}
		defer c.Close()
		raw, err := c.SyscallConn()
		if err != nil {
			return err
		}
		var serr error
		raw.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DONT)
		})
		if serr != nil {
			return serr
		}
		buf := make([]byte, size)
		to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9))
		for i := 0; i < n; i++ {
			if _, err := c.WriteToUDP(buf, to); err != nil {
				return err
			}
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("send UDP from %s to %s: %v", node.Name(), dst, err)
	}
}
