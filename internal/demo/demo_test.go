package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/buftest"
	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/pmtu"
)

// bin is the interlink binary built for these tests: the demo runs it
// inside the lab's nodes, as `make demo` does.
var bin string

func TestMain(m *testing.M) {
	labuptest.Main(m, "demo tests", &bin, "t6-demo-bin-")
}

func needRoot(t *testing.T) {
	t.Helper()
	roottest.Require(t, "it builds a network-namespace lab (CAP_NET_ADMIN)")
}

// cleanupLab removes the lab even when the test fails halfway.
func cleanupLab(t *testing.T, name string) {
	t.Cleanup(func() {
		exec.Command(bin, "lab", "down", name).Run()
	})
}

// namespaces lists the network namespaces of lab name.
func namespaces(t *testing.T, name string) []string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() == "il-"+name || strings.HasPrefix(e.Name(), "il-"+name+".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// labProcesses counts processes whose network namespace is one of the lab's.
func labProcesses(t *testing.T, name string) int {
	t.Helper()
	want := map[uint64]bool{}
	for _, ns := range namespaces(t, name) {
		var st syscall.Stat_t
		if syscall.Stat("/run/netns/"+ns, &st) == nil {
			want[st.Ino] = true
		}
	}
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && want[st.Ino] {
			n++
		}
	}
	return n
}

// runDemo runs `interlink lab demo ARGS` with TMPDIR=tmp and fails the
// test unless it exits 0.
func runDemo(t *testing.T, tmp string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"lab", "demo"}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil {
		t.Fatalf("lab demo %v: %v\nstderr: %s\nstdout: %s", args, err, e.String(), o.String())
	}
	return o.String(), e.String()
}

// TestDemoVerdicts runs the demo shortened and checks that its verdicts are
// the measured ones: node3's paths are blackholes at 1500 and only they,
// an 8 KiB block is 6 fragments at 1500 and 1 packet at 9000, and the lab,
// its processes and the token are gone afterwards.
func TestDemoVerdicts(t *testing.T) {
	needRoot(t)
	const name = "t6demo"
	cleanupLab(t, name)
	tmp := t.TempDir()
	page := filepath.Join(t.TempDir(), "demo.html")
	stdout, stderr := runDemo(t, tmp, "--name", name, "--time", "1s", "--json", "--html", page)
	if stderr != "" {
		t.Errorf("stderr in a pipe should be empty (no progress), got %q", stderr)
	}
	var res demo.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	// --html tells the same story as one report: the heatmap with node3's
	// blackholes, the blocks compared.
	html, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(html, []byte(`class="chart heatmap mesh-heatmap"`)) ||
		!bytes.Contains(html, []byte("<title>node3 -&gt; node1 (")) || !bytes.Contains(html, []byte(`class="chart bars demo-fragments"`)) {
		t.Errorf("--html: %v; %d bytes without the heatmap or the blocks", err, len(html))
	}
	if res.Schema != "interlink.demo/v1" || res.Lab != name || res.Kept || len(res.Errors) != 0 {
		t.Errorf("schema %q lab %q kept %v errors %v", res.Schema, res.Lab, res.Kept, res.Errors)
	}

	// check: every host's interconnect says 9000.
	if len(res.Checks) != 3 {
		t.Fatalf("%d checks, want 3", len(res.Checks))
	}
	for _, c := range res.Checks {
		if c.Result == nil || c.Result.Schema != "interlink.check/v1" || c.ExitCode > 2 {
			t.Errorf("check on %s: %+v", c.Node, c)
			continue
		}
		mtu := 0
		for _, i := range c.Result.Inventory.Interfaces {
			if i.Name == "eth1" {
				mtu = i.MTU
			}
		}
		if mtu != 9000 {
			t.Errorf("check on %s: eth1 MTU %d, want 9000 (the host says 9000)", c.Node, mtu)
		}
	}

	// mesh: exactly node3's paths are blackholes at 1500, the rest 9000.
	if res.Mesh == nil || len(res.Mesh.Paths) != 6 {
		t.Fatalf("mesh: %+v", res.Mesh)
	}
	for _, p := range res.Mesh.Paths {
		bad := p.From == "node3" || p.To == "node3"
		switch {
		case bad && (p.Verdict != pmtu.Blackhole || p.PathMTU != 1500 || p.ICMPFrom != ""):
			t.Errorf("%s -> %s: %s %d (icmp from %q), want blackhole at 1500 without ICMP", p.From, p.To, p.Verdict, p.PathMTU, p.ICMPFrom)
		case !bad && (p.Verdict != pmtu.OK || p.PathMTU != 9000):
			t.Errorf("%s -> %s: %s %d, want ok 9000", p.From, p.To, p.Verdict, p.PathMTU)
		}
	}
	d := res.Diagnosis
	if d == nil || len(d.Ports) != 1 || d.Ports[0].Node != "node3" || d.Ports[0].PathMTU != 1500 || d.Ports[0].InterfaceMTU != 9000 ||
		d.Ports[0].Paths != 4 || d.Unexplained != 0 || d.TracepathMTU != 9000 || d.ICMPErrors != 0 {
		t.Errorf("diagnosis %+v", d)
	}

	// blocks: 1 packet per 8 KiB block at 9000, 6 fragments at 1500.
	if len(res.Blocks) != 2 {
		t.Fatalf("%d blocks runs, want 2", len(res.Blocks))
	}
	for i, want := range []struct {
		mtu   int
		frags float64
	}{{9000, 1}, {1500, 6}} {
		b := res.Blocks[i]
		s := b.Summary()
		if s == nil || b.Error != "" {
			t.Errorf("blocks %s: no result (%s)", b.Label, b.Error)
			continue
		}
		if b.LinkMTU != want.mtu || s.MTU != want.mtu || b.Result.Spec.Block != 8192 {
			t.Errorf("blocks %s: link MTU %d, path MTU %d, block %d", b.Label, b.LinkMTU, s.MTU, b.Result.Spec.Block)
		}
		if math.Abs(s.FragmentsPerMessage-want.frags) > 0.05 {
			t.Errorf("blocks at %d: %.2f fragments per block, want %.0f", want.mtu, s.FragmentsPerMessage, want.frags)
		}
		if s.Messages == 0 || s.PerSec <= 0 || s.RTT == nil || s.RTT.P50 <= 0 || s.ClientCost.CPUNsPerMsg <= 0 {
			t.Errorf("blocks at %d: figures missing: %+v", want.mtu, s)
		}
	}
	// The same blocks with 8 in flight, both MTUs, the same fragments.
	if len(res.Loaded) != 2 {
		t.Fatalf("%d loaded blocks runs, want 2", len(res.Loaded))
	}
	for i, frags := range []float64{1, 6} {
		s := res.Loaded[i].Summary()
		if s == nil || res.Loaded[i].Error != "" || res.Loaded[i].Result.Spec.Outstanding != demo.LoadedOutstanding || math.Abs(s.FragmentsPerMessage-frags) > 0.05 || s.PerSec <= 0 {
			t.Errorf("loaded blocks %s: %+v (%s)", res.Loaded[i].Label, s, res.Loaded[i].Error)
		}
	}
	if len(res.TCP) != 2 || res.TCP[0].Summary() == nil || res.TCP[0].Summary().BitsPerSec <= 0 || res.TCP[1].Summary() == nil {
		t.Errorf("tcp runs: %+v", res.TCP)
	}
	// gc: Cache Fusion across the three nodes loses every block that
	// crosses node3's port and no other; every pair balances; exit 2.
	if res.GC == nil || res.GC.Result == nil || res.GC.Error != "" || res.GC.ExitCode != 2 || len(res.GC.Result.Pairs) != 6 {
		t.Fatalf("gc run: %+v", res.GC)
	}
	for _, p := range res.GC.Result.Pairs {
		bad := p.Requester == "node3" || p.Server == "node3"
		if !p.Balanced || bad && (p.Lost == 0 || p.Received != 0) || !bad && (p.Lost != 0 || p.Received == 0) {
			t.Errorf("gc %s <- %s: requested %d, received %d, lost %d", p.Requester, p.Server, p.Requested, p.Received, p.Lost)
		}
	}
	if st := res.GC.Story(res.Diagnosis); st.BadLost == 0 || st.GoodLost != 0 || st.LostWaits != st.BadLost || st.PingsLost8K == 0 || st.PingsLost5H != 0 {
		t.Errorf("gc story %+v", st)
	}
	if !bytes.Contains(html, []byte(`class="chart heatmap gc-lost"`)) {
		t.Error("--html: no lost-blocks heatmap of the gc run")
	}
	if len(res.Advice) == 0 || !strings.Contains(res.Advice[0], "node3") || !strings.Contains(res.Advice[0], "9000") {
		t.Errorf("advice %q: want the port of node3 first", res.Advice)
	}

	// Nothing left: namespaces, processes, state, the token directory.
	if ns := namespaces(t, name); len(ns) != 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
	labs, err := lab.Labs()
	if err != nil || slices.Contains(labs, name) {
		t.Errorf("labs recorded after the demo: %v %v", labs, err)
	}
}

// TestDemoTextKeep runs the text story with --keep: the lab stays up with
// its agents, the output says how to explore it, and lab down removes it.
func TestDemoTextKeep(t *testing.T) {
	needRoot(t)
	const name = "t6keep"
	labs := t.TempDir()
	t.Setenv("INTERLINK_LAB_DIR", labs) // before cleanupLab, whose lab down needs it
	cleanupLab(t, name)
	tmp := t.TempDir()
	stdout, _ := runDemo(t, tmp, "--name", name, "--time", "1s", "--keep")
	for _, want := range []string{
		"1. The lab", "2. Every host looks fine", "3. The paths say otherwise", "is a blackhole at 1500",
		`would have said "pmtu 9000"`, "fragments per block", "6.00", "5. What the database feels", "Every lost block has node3 at one end", "6. What to do", "node3: the switch port",
		bin + " lab exec " + name + " node1 -- " + bin + " mesh --token-file " + filepath.Join(labs, name+".d", "token"),
		bin + " lab down " + name,
		" bench --token-file " + filepath.Join(labs, name+".d", "token") + " --mode gc 'node1=198.18.99.1:7471@198.18.10.1' node2=",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if len(namespaces(t, name)) != 4 {
		t.Fatalf("--keep: namespaces %v, want the switch and 3 nodes", namespaces(t, name))
	}
	if n := labProcesses(t, name); n != 3 {
		t.Errorf("--keep: %d processes in the lab, want the 3 agents", n)
	}
	tokens, _ := filepath.Glob(filepath.Join(labs, name+".d", "token"))
	if len(tokens) != 1 {
		t.Fatalf("token files %v", tokens)
	}
	if st, err := os.Stat(tokens[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token %v mode %v", err, st.Mode())
	}
	// The kept lab works as printed: a pmtu from node1 to node3's agent.
	out, err := exec.Command(bin, "lab", "exec", name, "node1", "--", bin, "pmtu", "--token-file", tokens[0], "--json", "198.18.99.3").Output()
	if err != nil {
		t.Fatalf("pmtu in the kept lab: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "lab", "down", name).CombinedOutput(); err != nil {
		t.Fatalf("lab down: %v\n%s", err, out)
	}
	if ns := namespaces(t, name); len(ns) != 0 {
		t.Errorf("namespaces left after lab down: %v", ns)
	}
	if entries, _ := os.ReadDir(labs); len(entries) != 0 {
		t.Errorf("left in the lab state directory after lab down: %v", entries)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}

// TestDemoKilled: `lab demo` killed with SIGKILL takes its agents with it,
// and `lab down` then removes everything it wrote: the token, the agents'
// logs and the lab's state.
func TestDemoKilled(t *testing.T) {
	needRoot(t)
	const name = "t6kill"
	labs := t.TempDir()
	t.Setenv("INTERLINK_LAB_DIR", labs)
	cleanupLab(t, name)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "lab", "demo", "--name", name, "--time", "20s")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var o, e buftest.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until the agents run and the nodes are being checked.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(o.String(), "2. Every host looks fine") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not reach the checks:\n%s\n%s", o.String(), e.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := labProcesses(t, name); n < 3 {
		t.Fatalf("%d processes in the lab before the kill, want at least the 3 agents", n)
	}
	if logs, _ := filepath.Glob(filepath.Join(labs, name+".d", "agent-*.log")); len(logs) != 3 {
		t.Errorf("agent logs %v, want 3 in the lab's directory", logs)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The agents die with the demo (parent-death signal), lab down or not.
	for deadline := time.Now().Add(60 * time.Second); labProcesses(t, name) > 0; time.Sleep(20 * time.Millisecond) { // only against a hang
		if time.Now().After(deadline) {
			t.Errorf("%d processes still in the lab a minute after the demo was killed", labProcesses(t, name))
			break
		}
	}
	if out, err := exec.Command(bin, "lab", "down", name).CombinedOutput(); err != nil || string(out) != "lab "+name+": down\n" {
		t.Fatalf("lab down: %v: %q", err, out)
	}
	if ns := namespaces(t, name); len(ns) != 0 {
		t.Errorf("namespaces left after lab down: %v", ns)
	}
	if entries, _ := os.ReadDir(labs); len(entries) != 0 {
		t.Errorf("left in the lab state directory after lab down: %v", entries)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}

// TestDemoInterrupt: Ctrl-C in the middle of the blocks tears the lab down
// and reports what was measured.
func TestDemoInterrupt(t *testing.T) {
	needRoot(t)
	const name = "t6int"
	cleanupLab(t, name)
	cmd := exec.Command(bin, "lab", "demo", "--name", name, "--time", "20s")
	var o, e buftest.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// Wait until the blocks are being measured (the mesh has been shown).
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(o.String(), "3. The paths say otherwise") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not reach the mesh:\n%s\n%s", o.String(), e.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop within 30s of Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit %d after Ctrl-C, want 3", code)
	}
	// The blocks run cut short is reported with what it measured.
	if !strings.Contains(o.String(), "Interrupted after") || !strings.Contains(o.String(), "blocks/s") {
		t.Errorf("output after Ctrl-C:\n%s", o.String())
	}
	if ns := namespaces(t, name); len(ns) != 0 {
		t.Errorf("namespaces left after Ctrl-C: %v", ns)
	}
}

// TestDemoNotRoot: without the privilege, one line and exit 3, nothing made.
func TestDemoNotRoot(t *testing.T) {
	needRoot(t) // to switch to nobody
	cmd := exec.Command(bin, "lab", "demo", "--name", "t6nobody")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = "/"
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit %d, want 3", code)
	}
	if o.Len() != 0 || strings.Count(e.String(), "\n") != 1 || !strings.Contains(e.String(), "CAP_NET_ADMIN (root) is required") {
		t.Errorf("stdout %q stderr %q: want one line saying CAP_NET_ADMIN (root) is required", o.String(), e.String())
	}
	if ns := namespaces(t, "t6nobody"); len(ns) != 0 {
		t.Errorf("namespaces made without privilege: %v", ns)
	}
}
