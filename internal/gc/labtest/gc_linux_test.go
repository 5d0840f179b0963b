//go:build linux

// Package labtest runs `interlink bench --mode gc` as users do: a real
// `interlink agent` in every node of a namespace lab, the command in one of
// them (issue 23). It builds labs named t23-*: it needs root.
package labtest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/stats"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) { labuptest.Main(m, "gc lab tests", &bin, "t23-interlink-") }

const token = "t23-gc-lab-token-0123456789abcdef"

// cluster is a lab with an agent in every node.
type cluster struct {
	lab   *lab.Lab
	nodes []*lab.Node
	addrs []string // each node's interconnect address (its agent listens there)
	tok   string
}

// up brings topo up (renamed name) and starts an agent in every node.
func up(t *testing.T, topo *lab.Topology, name string) *cluster {
	t.Helper()
	return upOn(t, topo, name, -1)
}

// upOn is up with every agent on CPU cpu (taskset; -1: anywhere), with two
// Ps as on this machine, so that its loops still block in the kernel
// without the runtime's system-call bookkeeping.
func upOn(t *testing.T, topo *lab.Topology, name string, cpu int) *cluster {
	t.Helper()
	topo.Name = name
	l := labuptest.Up(t, topo)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cluster{lab: l, tok: tok}
	for _, nt := range topo.Nodes {
		n := labuptest.Node(t, l, nt.Name)
		addr := n.Addr("", 4).String()
		cmd := exec.Command(bin, "agent", "--listen", addr, "--token-file", tok)
		if cpu >= 0 {
			cmd = exec.Command("taskset", "-c", strconv.Itoa(cpu), bin, "agent", "--listen", addr, "--token-file", tok)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
		}
		labuptest.Daemon(t, n, cmd, "agent", "listening on")
		c.nodes, c.addrs = append(c.nodes, n), append(c.addrs, addr)
	}
	return c
}

func builtin(t *testing.T, name string) *lab.Topology {
	t.Helper()
	topo, err := lab.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// gcRun runs bench --mode gc from the first node over the nodes with these
// indexes, --json, and returns the report and the exit code.
func (c *cluster) gcRun(t *testing.T, nodes []int, args ...string) (*gc.Report, int) {
	t.Helper()
	cmd := []string{"bench", "--mode", "gc", "--token-file", c.tok, "--json"}
	for _, i := range nodes {
		cmd = append(cmd, fmt.Sprintf("%s=%s", c.nodes[i].Name(), c.addrs[i]))
	}
	out, errOut, code := labuptest.Exec(t, c.nodes[0], exec.Command(bin, append(cmd, args...)...), time.Minute)
	var r gc.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench --mode gc: exit %d, %v\n%s", code, err, errOut)
	}
	return &r, code
}

// balanced checks requested = received + lost on every pair.
func balanced(t *testing.T, r *gc.Report) {
	t.Helper()
	for _, p := range r.Pairs {
		if !p.Balanced || p.Requested != p.Received+p.Lost || p.Requested == 0 {
			t.Errorf("%s <- %s: requested %d, received %d, lost %d", p.Requester, p.Server, p.Requested, p.Received, p.Lost)
		}
	}
}

// healthy checks a run over a healthy lab: exit 0, or 1 with a few blocks
// lost. A block is lost when its receive time passes --timeout (500 ms):
// on this shared 2-core machine, under other tests' labs, a node's thread
// has waited that long for a CPU now and then (1 to 8 of about 28,000
// blocks per pair); a path that drops anything loses far more (see the
// blackhole test), so up to 0.1 % per pair passes here, and is logged.
func healthy(t *testing.T, r *gc.Report, code int) {
	t.Helper()
	for _, p := range r.Pairs {
		if p.Lost > 0 {
			t.Logf("%s <- %s: %d of %d lost; max receive time %v", p.Requester, p.Server, p.Lost, p.Requested, time.Duration(max(maxNs(p.TwoWay), maxNs(p.ThreeWay))))
		}
		if p.Lost*1000 > p.Requested {
			t.Errorf("%s <- %s: %d of %d blocks lost on a healthy lab", p.Requester, p.Server, p.Lost, p.Requested)
		}
	}
	if code > 1 || r.Verdict != gc.VerdictOK && r.Verdict != gc.VerdictWarning {
		t.Errorf("exit %d, verdict %s, problems %+v", code, r.Verdict, r.Problems)
	}
}

func maxNs(l *latency.Summary) int64 {
	if l == nil {
		return 0
	}
	return l.Max
}

// TestLabJumbo: the built-in jumbo lab (3 nodes at MTU 9000). With three
// nodes both 2-way and 3-way transfers occur and the 3-way median is the
// longer; with two, no 3-way. Every pair balances, an 8 KiB block is one
// packet, nothing is lost.
func TestLabJumbo(t *testing.T) {
	c := up(t, builtin(t, "jumbo"), "t23-jumbo")
	r, code := c.gcRun(t, []int{0, 1, 2}, "--time", "3s")
	two, three := r.Total.TwoWay, r.Total.ThreeWay
	if two == nil || three == nil {
		t.Fatalf("3 nodes: 2-way %+v, 3-way %+v", two, three)
	}
	t.Logf("3 nodes at 9000: %.0f blocks/s, 2-way %d (p50 %v), 3-way %d (p50 %v, %.1f %%), %.1f us cpu/block, %.2f fragments/block",
		r.Total.BlocksPerSec, two.Count, time.Duration(two.P50), three.Count, time.Duration(three.P50), r.Total.ThreeWayPercent,
		r.Total.CPUNsPerBlock/1e3, r.Total.FragmentsPerBlock)
	healthy(t, r, code)
	// Thousands of each: a 3-way transfer is one hop and one node more.
	if two.Count < 1000 || three.Count < 300 || three.P50 <= two.P50 {
		t.Errorf("2-way %d blocks p50 %v, 3-way %d blocks p50 %v", two.Count, time.Duration(two.P50), three.Count, time.Duration(three.P50))
	}
	balanced(t, r)
	for _, n := range r.Nodes {
		if n.MTU != 9000 || n.FragmentsPerBlock != 1 || n.Dropped != 0 {
			t.Errorf("%s: MTU %d, %.3f fragments per block, dropped %d", n.Name, n.MTU, n.FragmentsPerBlock, n.Dropped)
		}
	}
	if len(r.Pings) != 9 {
		t.Errorf("%d ping rows, want 9", len(r.Pings))
	}

	r, code = c.gcRun(t, []int{0, 1}, "--time", "2s")
	if r.Total.ThreeWay != nil || r.Total.TwoWay == nil || r.Total.TwoWay.Count < 1000 {
		t.Errorf("2 nodes: 2-way %+v, 3-way %+v", r.Total.TwoWay, r.Total.ThreeWay)
	}
	healthy(t, r, code)
	balanced(t, r)
}

// fragTopo is the jumbo lab at MTU 1500.
func fragTopo(t *testing.T) *lab.Topology {
	t.Helper()
	topo, err := lab.Parse("t23", []byte(`name: t23-frag
switches:
  ic: {mtu: 1500}
nodes:
  node1:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.23.1/24]}
  node2:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.23.2/24]}
  node3:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.23.3/24]}
`))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestLabFragments1500: at MTU 1500 every 8 KiB block the nodes ship is 6
// IP fragments (at 9000 one packet: TestLabJumbo).
func TestLabFragments1500(t *testing.T) {
	c := up(t, fragTopo(t), "t23-frag")
	r, code := c.gcRun(t, []int{0, 1, 2}, "--time", "2s")
	t.Logf("3 nodes at 1500: %.0f blocks/s, %.3f fragments/block, %.2f packets/block, 2-way p50 %v",
		r.Total.BlocksPerSec, r.Total.FragmentsPerBlock, r.Total.PacketsPerBlock, time.Duration(r.Total.TwoWay.P50))
	healthy(t, r, code)
	if r.Total.FragmentsPerBlock != 6 {
		t.Errorf("%.3f fragments per block", r.Total.FragmentsPerBlock)
	}
	for _, n := range r.Nodes {
		if n.MTU != 1500 || n.FragmentsPerBlock != 6 || n.Served < 500 {
			t.Errorf("%s: MTU %d, %.3f fragments per block over %d blocks", n.Name, n.MTU, n.FragmentsPerBlock, n.Served)
		}
	}
	balanced(t, r)
}

// TestLabBlackhole: the built-in blackhole (node2's switch port at 1500,
// every interface at 9000). Every lost block has node2 at one end, the pairs
// of node1 and node3 lose none, node2's own pings of 8 KiB never come back,
// every pair balances, and the run fails (exit 2).
func TestLabBlackhole(t *testing.T) {
	c := up(t, builtin(t, "blackhole"), "t23-blackhole")
	t0 := time.Now()
	r, code := c.gcRun(t, []int{0, 1, 2}, "--time", "2s", "--timeout", "100ms")
	took := time.Since(t0)
	balanced(t, r)
	for _, p := range r.Pairs {
		hole := p.Requester == "node2" || p.Server == "node2"
		t.Logf("%s <- %s: requested %d, received %d, lost %d %+v", p.Requester, p.Server, p.Requested, p.Received, p.Lost, p.LostBy)
		// Two thirds of the requests of node1 and node3 involve node2: their
		// slots spend the run waiting out lost blocks (as a RAC session
		// stalls on "gc cr block lost"), so their own pair moves tens of
		// blocks, not thousands.
		if hole && (p.Lost == 0 || p.Received != 0) || !hole && (p.Lost != 0 || p.Received < 20) {
			t.Errorf("%s <- %s: received %d, lost %d", p.Requester, p.Server, p.Received, p.Lost)
		}
	}
	for _, n := range r.Nodes {
		if w := n.LostWhere; n.Lost > 0 && (w == nil || w.NothingSeen != n.Lost) {
			t.Errorf("%s: lost %d, where %+v (a dropped jumbo frame leaves nothing for this node's kernel)", n.Name, n.Lost, w)
		}
	}
	for _, p := range r.Pings {
		hole := (p.Node == "node2") != (p.Target == "node2")
		if hole && (p.Large.Count != 0 || p.Large.Lost == 0 || p.Small.Count == 0) || !hole && p.Small.Lost+p.Large.Lost != 0 {
			t.Errorf("pings %s -> %s: 500 B %+v, 8 KiB %+v", p.Node, p.Target, p.Small, p.Large)
		}
	}
	if code != 2 || r.Verdict != gc.VerdictFailed {
		t.Errorf("exit %d, verdict %s", code, r.Verdict)
	}
	t.Logf("took %v (--time 2s, grace %v)", took, gc.Grace(r.Spec))
}

// blocksRTT runs bench --mode blocks from node1 to node2's agent with
// requests and blocks of size, paced to perSec requests a second, and
// returns the mean round trip in ns. Its requesting thread runs on CPU 0.
func (c *cluster) blocksRTT(t *testing.T, size string, perSec int) float64 {
	t.Helper()
	cmd := exec.Command(bin, "bench", c.addrs[1], "--mode", "blocks", "--request", size, "--block", size, "--time", "1s",
		"--rate", strconv.Itoa(perSec), "--token-file", c.tok, "--json", "--self-test=false", "--cpu", "0")
	out, errOut, code := labuptest.Exec(t, c.nodes[0], cmd, time.Minute)
	var r struct {
		Spec struct {
			RequestsPerSec float64 `json:"requests_per_sec"`
		} `json:"spec"`
		Flows []struct {
			Summary struct {
				RTT *latency.Summary `json:"rtt"`
			} `json:"summary"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Flows) == 0 || r.Flows[0].Summary.RTT == nil {
		t.Fatalf("bench --mode blocks %s: exit %d, %v\n%s", size, code, err, errOut)
	}
	if r.Spec.RequestsPerSec != float64(perSec) {
		t.Fatalf("bench --mode blocks --rate %d: the result's spec says %v requests per second", perSec, r.Spec.RequestsPerSec)
	}
	return r.Flows[0].Summary.RTT.Mean
}

// middle is the median of vs and how far apart their extremes are.
func middle(vs []float64) (median, width float64) {
	return stats.Median(vs), slices.Max(vs) - slices.Min(vs)
}

// TestLabPingAgreesWithBlocks: the ping table's 500 B and 8 KiB averages
// (a node to the other, echoed at the ping's size) agree with bench
// --mode blocks round trips of the same sizes (request and block both
// 500 B, both 8 KiB) between the same nodes of the same lab, within the
// tool's own noise.
//
// Both measure lone round trips between two threads that do nothing else:
// a ping goes alone (every size to every target at a time of its own),
// from and to each node's ping thread, and bench --mode blocks --rate 100
// sends one request every 10 ms, as sockperf --mps does. The gc workload
// beside the pings is light (20 requests per second per node).
//
// Placement is controlled, as in bench/compare: every agent and bench's
// requesting thread run on CPU 0. On this 2-CPU virtual machine a lone
// round trip costs tens of us more when the host wakes the other, idle CPU
// for it than when both threads share one, and where the scheduler puts a
// thread depends on what else wakes it (a ping thread also wakes on its
// own timers): left free, the placement, not the tools, would be compared.
//
// The runs alternate, five rounds; each method's figure is the median of
// its rounds. The noise is the wider of the two methods' ranges over the
// rounds (how far a figure of either moves between repeats on this shared
// machine), plus the ping table's own floor: its control rows, each node's
// pings to itself, which cross no network and no other thread (about 20 us
// here: what the host adds to any round trip the tool times, below which
// two round trips cannot be told apart). Even placed alike, the two
// methods' means have stood 25 us apart for minutes on this machine and
// level at other times; the median difference must be within the noise. A
// ping waiting behind the blocks or behind another ping, or a tool that
// timed something else, stands off by more.
func TestLabPingAgreesWithBlocks(t *testing.T) {
	c := upOn(t, builtin(t, "jumbo"), "t23-ping", 0)
	const rounds = 5
	var blocks, pings, control [2][]float64
	for k := 0; k < rounds; k++ {
		for i, size := range []string{"500", "8K"} {
			blocks[i] = append(blocks[i], c.blocksRTT(t, size, 100))
		}
		r, _ := c.gcRun(t, []int{0, 1}, "--time", "1500ms", "--outstanding", "1", "--rate", "20", "--ping-interval", "10ms")
		if r.Total.Ping500AvgNs == 0 || r.Total.Ping8KAvgNs == 0 {
			t.Fatalf("round %d: no ping averages: %+v", k, r.Total)
		}
		for _, p := range r.Pings {
			// 1.5 s at one ping of each size every 10 ms: 150 each, less
			// the setup's share.
			if p.Small.Count < 100 || p.Large.Count < 100 || p.Small.Lost+p.Large.Lost > 0 {
				t.Errorf("round %d: pings %s -> %s: 500 B %+v, 8 KiB %+v", k, p.Node, p.Target, p.Small, p.Large)
			}
		}
		pings[0] = append(pings[0], r.Total.Ping500AvgNs)
		pings[1] = append(pings[1], r.Total.Ping8KAvgNs)
		for _, p := range r.Pings {
			if p.Node == p.Target {
				control[0], control[1] = append(control[0], p.Small.AvgNs), append(control[1], p.Large.AvgNs)
			}
		}
	}
	for i, size := range []string{"500 B", "8 KiB"} {
		bm, bw := middle(blocks[i])
		pm, pw := middle(pings[i])
		floor := stats.Median(control[i])
		noise := max(bw, pw) + floor
		t.Logf("%s: ping averages median %.1f us (range %.1f), paced blocks means median %.1f us (range %.1f), control rows %.1f us: difference %.1f us, noise %.1f us; rounds: pings %.0f, blocks %.0f",
			size, pm/1e3, pw/1e3, bm/1e3, bw/1e3, floor/1e3, (pm-bm)/1e3, noise/1e3, pings[i], blocks[i])
		if math.Abs(pm-bm) > noise {
			t.Errorf("%s: the ping average %.1f us and the blocks round trip %.1f us differ by more than the noise (%.1f us)", size, pm/1e3, bm/1e3, noise/1e3)
		}
	}
}

// TestLabAgentsOnPublicNetwork: the built-in rac lab, agents on the public
// network (eth0, MTU 1500) and the blocks on the interconnect (eth1, 9000),
// as NAME=AGENT@ADDR says on a real cluster: each node's data endpoint is
// its interconnect address, and an 8 KiB block crosses it in one packet.
func TestLabAgentsOnPublicNetwork(t *testing.T) {
	topo := builtin(t, "rac")
	topo.Name = "t23-rac"
	l := labuptest.Up(t, topo)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	var args []string
	for i, name := range []string{"node1", "node2"} {
		n := labuptest.Node(t, l, name)
		pub, priv := fmt.Sprintf("198.18.99.%d", i+1), fmt.Sprintf("198.18.10.%d", i+1)
		labuptest.Daemon(t, n, exec.Command(bin, "agent", "--listen", pub, "--token-file", tok), "agent", "listening on")
		args = append(args, fmt.Sprintf("%s=%s@%s", name, pub, priv))
	}
	cmd := exec.Command(bin, append([]string{"bench", "--mode", "gc", "--token-file", tok, "--json", "--time", "1s"}, args...)...)
	out, errOut, code := labuptest.Exec(t, labuptest.Node(t, l, "node1"), cmd, time.Minute)
	var r gc.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, errOut)
	}
	healthy(t, &r, code)
	balanced(t, &r)
	for i, n := range r.Nodes {
		if want := fmt.Sprintf("198.18.10.%d:", i+1); !strings.HasPrefix(n.Addr, want) || n.MTU != 9000 || n.FragmentsPerBlock != 1 || n.Received < 100 {
			t.Errorf("%s: data endpoint %s, MTU %d, %.2f fragments per block, %d blocks", n.Name, n.Addr, n.MTU, n.FragmentsPerBlock, n.Received)
		}
	}
}
