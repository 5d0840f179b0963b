//go:build linux

package vmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// TestVMJumbo boots the built-in vmjumbo (three VMs at 9000, node2's
// switch port a tap left at 1500), and from inside the guests: each runs
// its own kernel with virtio_net; interlink cluster from the ops node
// reaches them over SSH; the mesh from node1 finds exactly node2's paths
// blackholed at 1500, over IPv4 and IPv6; with node2's interface set to
// 1500 (the fix that makes it work), 8 KiB blocks from node2 travel in 6
// fragments and from node3 in 1. lab status asks the guests how their
// services are: node3's sshd killed in the guest is stopped, exit 1. Then
// lab down leaves nothing. Every
// step's time is logged; the whole is bounded (4 minutes here in TCG).
func TestVMJumbo(t *testing.T) {
	begin := time.Now()
	k := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	topo, err := lab.Load("vmjumbo")
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = fmt.Sprintf("vmj%d", os.Getpid()%100000)
	start := time.Now()
	// On a fresh machine Up fetches the kernel and builds the sshd image
	// first (about a minute); it says so.
	l, err := lab.Up(ctx, topo, lab.WithBinary(binary), lab.WithLog(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(topo.Name); err != nil && !errors.Is(err, lab.ErrNotFound) {
			t.Errorf("lab down: %v", err)
		}
	})
	step(t, "lab up (3 VMs)", start)
	pids := guests(t, topo.Name, k.Release)
	checkQemu(t, pids)
	run := runner(ctx, t, l)

	start = time.Now()
	checkGuests(ctx, t, topo.Name, k.Release, run)
	step(t, "kernels and drivers", start)

	start = time.Now()
	clusterFromOps(ctx, t, topo.Name, k.Release)
	step(t, "cluster --collect from ops over SSH", start)

	start = time.Now()
	checkMesh(t, run("node1", "interlink", "mesh", "--json", "--token-file", "/run/interlink/agent.token",
		"node1=198.18.10.1@198.18.10.1,fd00:10::1", "node2=198.18.10.2@198.18.10.2,fd00:10::2", "node3=198.18.10.3@198.18.10.3,fd00:10::3"))
	step(t, "mesh from node1", start)

	start = time.Now()
	run("node2", "ip", "link", "set", "eth1", "mtu", "1500")
	for _, c := range []struct {
		peer string
		frag float64
	}{{"198.18.10.2", 6}, {"198.18.10.3", 1}} {
		out := run("node1", "interlink", "bench", c.peer, "--mode", "blocks", "--time", "2s", "--json", "--token-file", "/run/interlink/agent.token")
		got := fragments(t, out)
		if len(got) == 0 || got[0] != c.frag {
			t.Errorf("bench blocks from %s: fragments per block %v, want %v", c.peer, got, c.frag)
		}
		t.Logf("8 KiB blocks from %s: %v fragments per block", c.peer, got)
	}
	step(t, "bench blocks", start)

	start = time.Now()
	checkSSHDKilled(ctx, t, topo.Name)
	step(t, "lab status asks the guests, sshd killed in node3", start)

	start = time.Now()
	if err := lab.Down(topo.Name); err != nil {
		t.Fatal(err)
	}
	step(t, "lab down", start)
	nothingLeft(t, topo.Name, pids)
	step(t, "total", begin)
	if d := time.Since(begin); d > 4*time.Minute {
		t.Errorf("took %s, more than 4 minutes", d.Round(time.Second))
	}
}

// fragments returns every fragments_per_message in a bench JSON document.
func fragments(t *testing.T, doc string) []float64 {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, doc)
	}
	var out []float64
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if f, ok := e.(float64); ok && k == "fragments_per_message" {
					out = append(out, f)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// nothingLeft checks that lab name left no qemu (the PIDs given, or any
// process naming the lab's directory), namespace, tap or file.
func nothingLeft(t *testing.T, name string, pids []int) {
	t.Helper()
	dir := filepath.Join(stateDir(), name+".d")
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for _, pid := range pids {
			if running(pid) {
				left = append(left, fmt.Sprintf("qemu %d", pid))
			}
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && bytes.Contains(cmd, []byte(dir)) && running(atoi(e.Name())) {
				left = append(left, "process "+e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
		ns, _ := os.ReadDir(lab.NetnsDir)
		for _, e := range ns {
			if e.Name() == "il-"+name || strings.HasPrefix(e.Name(), "il-"+name+".") {
				left = append(left, "namespace "+e.Name())
			}
		}
		for _, f := range []string{name + ".json", name + ".json.tmp", name + ".d", name + ".lock"} {
			if _, err := os.Lstat(filepath.Join(stateDir(), f)); err == nil {
				left = append(left, "file "+filepath.Join(stateDir(), f))
			}
		}
		links, _ := os.ReadDir("/sys/class/net")
		for _, e := range links {
			if strings.HasPrefix(e.Name(), "node") && strings.Contains(e.Name(), "-eth") {
				left = append(left, "host link "+e.Name()+" (a tap outside the switch namespace?)")
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("lab %s left: %s", name, strings.Join(left, "; "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stateDir() string {
	if d := os.Getenv("INTERLINK_LAB_DIR"); d != "" {
		return d
	}
	return lab.StateDir
}

// running reports whether pid is a process that is not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// runner returns a function that runs argv in a node of l and returns its
// output; exit 0 or 1 (mesh's for a problem path) pass, anything else
// ends the test.
func runner(ctx context.Context, t *testing.T, l *lab.Lab) func(node string, argv ...string) string {
	return func(node string, argv ...string) string {
		t.Helper()
		n, err := l.Node(node)
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		cctx, ccancel := context.WithTimeout(ctx, time.Minute)
		defer ccancel()
		code, err := n.Exec(cctx, argv, &out, &errb)
		if err != nil {
			t.Fatalf("%s: %v: %v\n%s", node, argv, err, errb.String())
		}
		if code != 0 && code != 1 {
			t.Fatalf("%s: %v: exit %d\n%s%s", node, argv, code, out.String(), errb.String())
		}
		return out.String()
	}
}

// checkMesh checks a mesh --json document of vmjumbo's interconnect over
// IPv4 and IPv6: twelve paths, exactly node2's eight blackholed at 1500.
func checkMesh(t *testing.T, out string) {
	t.Helper()
	var mesh struct {
		Paths []struct {
			From, To, Verdict string
			Network           int
			PathMTU           int `json:"path_mtu"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(out), &mesh); err != nil {
		t.Fatalf("mesh --json: %v\n%s", err, out)
	}
	var bad, want []string
	for _, p := range mesh.Paths {
		if p.Verdict != "ok" {
			bad = append(bad, fmt.Sprintf("%d %s->%s %s %d", p.Network, p.From, p.To, p.Verdict, p.PathMTU))
		}
	}
	for _, net := range []string{"1", "2"} {
		for _, p := range []string{"node1->node2", "node2->node1", "node2->node3", "node3->node2"} {
			want = append(want, net+" "+p+" blackhole 1500")
		}
	}
	slices.Sort(bad)
	if len(mesh.Paths) != 12 || !slices.Equal(bad, want) {
		t.Errorf("mesh: %d paths, problems %q, want 12 with exactly %q", len(mesh.Paths), bad, want)
	}
}

// guests checks that the lab is up with node1..node3 running the kernel
// release, and returns their qemu PIDs.
func guests(t *testing.T, name, release string) []int {
	t.Helper()
	st, err := lab.Inspect(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != lab.StateUp {
		t.Fatalf("lab %s is %s: %v", name, st.State, st.Problems)
	}
	var pids []int
	for _, n := range st.Nodes {
		if n.Name == "ops" {
			continue
		}
		if n.VM == nil || n.VM.State != lab.VMRunning || n.VM.Release != release {
			t.Fatalf("node %s: VM %+v, want running kernel %s", n.Name, n.VM, release)
		}
		pids = append(pids, n.VM.PID)
	}
	t.Logf("accelerator %s", st.Nodes[0].VM.Accel)
	return pids
}

// checkGuests checks each guest's kernel, NIC driver and MTU from inside
// it, and lab exec's output and exit code as people run it.
func checkGuests(ctx context.Context, t *testing.T, name, release string, run func(string, ...string) string) {
	t.Helper()
	for _, n := range []string{"node1", "node2", "node3"} {
		got := run(n, "sh", "-c", "uname -r; basename $(readlink /sys/class/net/eth1/device/driver); cat /sys/class/net/eth1/mtu")
		want := release + "\nvirtio_net\n9000\n"
		if got != want {
			t.Errorf("%s: kernel, driver, MTU %q, want %q (the guest's own kernel, not the host's)", n, got, want)
		}
	}
	cmd := exec.CommandContext(ctx, binary, "lab", "exec", name, "node3", "--", "sh", "-c", "hostname; exit 5")
	got, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 || string(got) != "node3\n" {
		t.Errorf("lab exec node3 -- sh -c 'hostname; exit 5': %q, %v; want node3 and exit 5", got, err)
	}
	// A background child holding the command's output is not waited for,
	// as in a namespace node: it still runs once lab exec has returned.
	got, err = exec.CommandContext(ctx, binary, "lab", "exec", name, "node1", "--", "sh", "-c", "sleep 60 & echo $!").Output()
	pid := strings.TrimSpace(string(got))
	if err != nil || pid == "" {
		t.Fatalf("lab exec node1 -- sh -c 'sleep 60 & echo $!': %q, %v", got, err)
	}
	if alive := run("node1", "sh", "-c", "kill -0 "+pid+" && echo alive"); alive != "alive\n" {
		t.Errorf("the background sleep %s had ended when lab exec returned: lab exec waited for it", pid)
	}
	run("node1", "kill", pid)
}

// checkQemu: each qemu runs sandboxed, and as an unprivileged user.
func checkQemu(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if !strings.Contains(string(cmdline), "-sandbox\x00on,") {
			t.Errorf("qemu %d runs without -sandbox: %q", pid, cmdline)
		}
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) == 5 && f[0] == "Uid:" && strings.Contains(" "+strings.Join(f[1:], " ")+" ", " 0 ") {
				t.Errorf("qemu %d runs as root: %s", pid, l)
			}
		}
	}
}
