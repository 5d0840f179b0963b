//go:build linux

package labtest

import (
	"bufio"
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
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/lab"
)

// binary is the interlink command built for these tests.
var binary string

// runMain builds cmd/interlink so the tests can run `interlink lab` as a
// user would, kill it, and run it as another user.
func runMain(m *testing.M) int {
	bin, cleanup, err := bintest.Build("t3-lab-bin-") // reachable by nobody, for the not-root test
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	binary = bin
	return m.Run()
}

// privateDir gives the test its own lab state directory, so `down --all`
// only ever sees this test's labs.
func privateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("INTERLINK_LAB_DIR", dir)
	return dir
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs interlink with args, bounded in time (only against a hang: a
// built-in lab's start on a loaded machine takes minutes).
func run(t testing.TB, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("interlink %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// labNamespaces lists the namespaces of this test package (il-t3...).
func labNamespaces(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(lab.NetnsDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "il-"+prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// hostLinks maps the host's interfaces to their MTU, master and addresses.
func hostLinks(t *testing.T) map[string]string {
	t.Helper()
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range links {
		a := l.Attrs()
		addrs, _ := netlink.AddrList(l, netlink.FAMILY_ALL)
		s := fmt.Sprintf("mtu %d master %d", a.MTU, a.MasterIndex)
		for _, ad := range addrs {
			s += " " + ad.IPNet.String()
		}
		out[a.Name] = s
	}
	return out
}

// sameHost fails the test if a host interface that existed before changed,
// or if one appeared with the name of a lab interface (a switch, a port, a
// node link). Other users of this machine may add their own interfaces
// meanwhile; those are not ours to judge.
func sameHost(t *testing.T, before, after map[string]string) {
	t.Helper()
	ours := map[string]bool{}
	for _, b := range lab.Builtins() {
		top, err := lab.Load(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range top.Switches {
			ours[s.Name] = true
		}
		for _, n := range top.Nodes {
			for _, l := range n.Links {
				ours[l.Name], ours[l.Port] = true, true
			}
		}
	}
	for name, was := range before {
		if now, ok := after[name]; ok && now != was {
			t.Errorf("host interface %s changed: %s -> %s", name, was, now)
		}
	}
	for name := range after {
		if _, existed := before[name]; !existed && ours[name] {
			t.Errorf("lab interface %s appeared on the host", name)
		}
	}
}

// nothingLeft fails the test if lab name left a namespace or any file in
// the state directory dir (NAME.json, NAME.json.tmp, NAME.lock, NAME.d).
func nothingLeft(t *testing.T, name, dir string) {
	t.Helper()
	for _, ns := range labNamespaces(t) {
		if ns == "il-"+name || strings.HasPrefix(ns, "il-"+name+".") {
			t.Errorf("namespace %s left behind", ns)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), name+".") {
			t.Errorf("%s left behind in %s", e.Name(), dir)
		}
	}
}

func TestCLIBadTopologiesCreateNothing(t *testing.T) {
	dir := privateDir(t)
	before := labNamespaces(t)
	hostBefore := hostLinks(t)
	cases := map[string]string{
		"unknown switch":    "name: t3-bad\nswitches: {a: {}}\nnodes:\n  n1:\n    links: [{switch: b}]\n",
		"duplicate address": "name: t3-bad\nswitches: {a: {}}\nnodes:\n  n1: {links: [{switch: a, address: 198.18.0.1/24}]}\n  n2: {links: [{switch: a, address: 198.18.0.1/24}]}\n",
		"MTU out of range":  "name: t3-bad\nswitches: {a: {mtu: 65536}}\nnodes: {n1: {}}\n",
		"bad YAML":          "name: t3-bad\nnodes: [\n",
		"unknown field":     "name: t3-bad\nnodes: {n1: {forwrd: true}}\n",
		"loss over 100%":    "name: t3-bad\nswitches: {a: {}}\nnodes:\n  n1: {links: [{switch: a, loss: 150%}]}\n",
		"negative loss":     "name: t3-bad\nswitches: {a: {loss: -1%}}\nnodes:\n  n1: {links: [{switch: a}]}\n",
		"loss not a number": "name: t3-bad\nswitches: {a: {}}\nnodes:\n  n1: {links: [{switch: a, loss: abc}]}\n",
	}
	for what, text := range cases {
		t.Run(what, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			r := run(t, "lab", "up", file)
			if r.code != 3 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "interlink: "+file+":") ||
				strings.Contains(what, "loss") && !strings.Contains(r.stderr, ".loss: ") {
				t.Errorf("lab up %s: exit %d, stdout %q, stderr %q; want exit 3 and one line naming FILE:LINE", what, r.code, r.stdout, r.stderr)
			}
			t.Logf("%s: %s", what, strings.TrimSpace(r.stderr))
		})
	}
	if after := labNamespaces(t); !slices.Equal(before, after) {
		t.Errorf("namespaces changed: before %v, after %v", before, after)
	}
	sameHost(t, hostBefore, hostLinks(t))
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("state written for a refused topology: %v", entries)
	}
	if r := run(t, "lab", "up", "no-such-builtin"); r.code != 3 || !strings.Contains(r.stderr, "neither a built-in") {
		t.Errorf("unknown built-in: exit %d, %q", r.code, r.stderr)
	}
}

// TestCLIKillDuringUp kills a `lab up` with SIGKILL at several points
// (between writing its record and renaming it, while creating namespaces,
// while creating links) and proves that `lab down`, or the next `lab up` of
// the same name, removes everything: namespaces and every file.
func TestCLIKillDuringUp(t *testing.T) {
	dir := privateDir(t)
	hostBefore := hostLinks(t)
	// routed: a record, then 5 namespaces (each recorded first), then 6 links.
	for _, c := range []struct {
		point string
		n     int
	}{{lab.PointState, 1}, {lab.PointState, 4}, {lab.PointNamespace, 2}, {lab.PointNamespace, 5}, {lab.PointLink, 3}} {
		for _, cleanup := range []string{"down", "up"} {
			name := fmt.Sprintf("%s-k%s%d%s", prefix, c.point[:2], c.n, cleanup)
			t.Run(fmt.Sprintf("at %s %d, then %s", c.point, c.n, cleanup), func(t *testing.T) {
				h := startPaused(t, name, c.point, c.n)
				if r := run(t, "lab", "status", name); c.n > 1 && (r.code != 1 || !strings.Contains(r.stdout, name+": building")) {
					t.Errorf("status while up runs: exit %d, %q; want exit 1, building", r.code, r.stdout)
				}
				killHelper(h)
				if c.point == lab.PointState {
					if _, err := os.Stat(filepath.Join(dir, name+".json.tmp")); err != nil {
						t.Fatalf("no record being written after the kill: the test did not kill there (%v)", err)
					}
				} else {
					if got := labNamespaces(t); !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "il-"+name) }) {
						t.Fatalf("no namespaces after the kill: the test did not kill halfway (%v)", got)
					}
					if r := run(t, "lab", "status", name); r.code != 1 || !strings.Contains(r.stdout, "incomplete") {
						t.Errorf("status of a killed lab: exit %d, %q; want exit 1, incomplete", r.code, r.stdout)
					}
				}
				// Killed before its first record was renamed: only the
				// .tmp is left, and status and down --all still see it.
				first := c.point == lab.PointState && c.n == 1
				if first {
					if r := run(t, "lab", "status"); r.code != 1 || !strings.Contains(r.stdout, name+": incomplete") {
						t.Errorf("status of a lab with only its .tmp: exit %d, %q", r.code, r.stdout+r.stderr)
					}
				}
				if first && cleanup == "down" {
					if r := run(t, "lab", "down", "--all"); r.code != 0 || r.stdout != "lab "+name+": down\n" {
						t.Fatalf("down --all: exit %d: %q %q", r.code, r.stdout, r.stderr)
					}
					nothingLeft(t, name, dir)
					return
				}
				if cleanup == "up" {
					if r := run(t, "lab", "up", "routed", "--name", name); r.code != 0 {
						t.Fatalf("up over leftovers: exit %d: %s", r.code, r.stderr)
					}
					if r := run(t, "lab", "status", name); r.code != 0 || !strings.Contains(r.stdout, ": up") {
						t.Errorf("status after up over leftovers: exit %d, %q", r.code, r.stdout+r.stderr)
					}
				}
				if r := run(t, "lab", "down", name); r.code != 0 || r.stdout != "lab "+name+": down\n" {
					t.Fatalf("down: exit %d: %q %q", r.code, r.stdout, r.stderr)
				}
				nothingLeft(t, name, dir)
			})
		}
	}
	// The interlink binary itself, killed while it builds (at whatever
	// point it has reached once its record appears).
	name := prefix + "-kbin"
	cmd := exec.Command(binary, "lab", "up", "routed", "--name", name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if _, err := os.Stat(filepath.Join(dir, name+".json")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("down after killing the binary: exit %d: %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	sameHost(t, hostBefore, hostLinks(t))
}

func TestCLITwoLabsCoexist(t *testing.T) {
	dir := privateDir(t)
	a, b := prefix+"-two-a", prefix+"-two-b"
	t.Cleanup(func() { lab.Down(a); lab.Down(b) })
	for _, x := range [][2]string{{"jumbo", a}, {"blackhole", b}} {
		if r := run(t, "lab", "up", x[0], "--name", x[1]); r.code != 0 {
			t.Fatalf("up %s: exit %d: %s", x[1], r.code, r.stderr)
		}
	}
	r := run(t, "lab", "status", "--json")
	var doc struct {
		Schema string
		Labs   []struct{ Name, State string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("status --json: exit %d, %v: %s%s", r.code, err, r.stdout, r.stderr)
	}
	if doc.Schema != "interlink.lab/v1" || len(doc.Labs) != 2 || doc.Labs[0].Name != a || doc.Labs[1].Name != b ||
		doc.Labs[0].State != "up" || doc.Labs[1].State != "up" {
		t.Fatalf("status of two labs: %+v", doc)
	}
	// Same addresses in both labs, no interference: each is its own world.
	if r := run(t, "lab", "down", a); r.code != 0 {
		t.Fatalf("down %s: %s", a, r.stderr)
	}
	nothingLeft(t, a, dir)
	lb, err := lab.Open(b)
	if err != nil {
		t.Fatalf("%s after %s went down: %v", b, a, err)
	}
	n1, n3 := node(t, lb, "node1"), node(t, lb, "node3")
	if err := reach(t, n1, n3, n3.Addr("ic", 6)); err != nil {
		t.Errorf("%s after %s went down: %v", b, a, err)
	}
	if r := run(t, "lab", "down", "--all"); r.code != 0 || r.stdout != "lab "+b+": down\n" {
		t.Errorf("down --all: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	nothingLeft(t, b, dir)
	if r := run(t, "lab", "down", b); r.code != 0 || !strings.Contains(r.stdout, "not up") {
		t.Errorf("down of a lab that is not up: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "lab", "status", b); r.code != 3 || !strings.Contains(r.stderr, "no such lab") {
		t.Errorf("status of a lab that is not up: exit %d, %q", r.code, r.stderr)
	}
}

func TestCLIExec(t *testing.T) {
	privateDir(t)
	name := prefix + "-exec"
	t.Cleanup(func() { lab.Down(name) })
	if r := run(t, "lab", "up", "rac", "--name", name); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	// The node's own view: its interfaces in /sys/class/net and
	// /proc/net/dev, nothing of the host's; exit code passed through.
	r := run(t, "lab", "exec", name, "node2", "--", "sh", "-c",
		`ls /sys/class/net | tr '\n' ' '; echo; cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' ' | sort | tr '\n' ' '; echo; cat /sys/class/net/eth1/mtu /sys/class/net/eth0/mtu; echo $INTERLINK_LAB $INTERLINK_NODE; exit 5`)
	want := "eth0 eth1 lo \neth0 eth1 lo \n9000\n1500\n" + name + " node2\n"
	if r.code != 5 || r.stdout != want {
		t.Errorf("exec in node2: exit %d, stdout %q, stderr %q; want exit 5, %q", r.code, r.stdout, r.stderr, want)
	}
	// interlink itself runs inside a node too (and finds its lab there).
	r = run(t, "lab", "exec", name, "node1", binary, "lab", "exec", name, "node2", "--", "cat", "/sys/class/net/eth1/mtu")
	if r.code != 0 || r.stdout != "9000\n" {
		t.Errorf("interlink in node1: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	// SIGTERM to interlink reaches the command, whose status comes back.
	cmd := exec.Command(binary, "lab", "exec", name, "node1", "--", "sh", "-c", "echo ready; exec sleep 30")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("exec: %q", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("exec sleep after SIGTERM: %v; want exit 143", err)
		}
	case <-time.After(60 * time.Second): // only against a hang
		cmd.Process.Kill()
		t.Error("SIGTERM did not reach the command in the node")
	}
	for _, bad := range [][]string{
		{"lab", "exec", name, "node9", "--", "true"},
		{"lab", "exec", prefix + "-nolab", "node1", "--", "true"},
		{"lab", "exec", name, "node1"},
		{"lab", "exec", name, "node1", "--", "/no/such/command"},
	} {
		if r := run(t, bad...); r.code != 3 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 3 and one line", bad, r.code, r.stderr)
		}
	}
}

func TestCLINotRoot(t *testing.T) {
	privateDir(t)
	for _, args := range [][]string{{"lab", "up", "jumbo", "--name", prefix + "-noroot"}, {"lab", "down", prefix + "-noroot"}} {
		cmd := exec.Command(binary, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || errb.String() != "interlink: lab: CAP_NET_ADMIN (root) is required\n" {
			t.Errorf("%v as nobody: %v, stderr %q; want exit 3 and the CAP_NET_ADMIN line", args, err, errb.String())
		}
	}
	if got := labNamespaces(t); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "noroot") }) {
		t.Errorf("namespaces created without privilege: %v", got)
	}
}

// TestHostUnchanged: a lab with a router, a shaped link and a blackhole
// port leaves the host's interfaces, addresses, routes and sysctls as they
// were.
func TestHostUnchanged(t *testing.T) {
	snapshot := func() string {
		var b strings.Builder
		routes, err := netlink.RouteList(nil, netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range routes {
			b.WriteString(r.String() + "\n")
		}
		for _, k := range []string{"net/ipv4/ip_forward", "net/ipv6/conf/all/forwarding", "net/ipv6/conf/default/accept_dad", "net/ipv6/conf/default/disable_ipv6", "net/bridge/bridge-nf-call-iptables"} {
			v, _ := os.ReadFile("/proc/sys/" + k)
			b.WriteString(k + "=" + string(v))
		}
		return b.String()
	}
	links := hostLinks(t)
	before := snapshot()
	for _, top := range []string{"routed", "shaped", "blackhole"} {
		up(t, top, "host-"+top)
	}
	if during := snapshot(); during != before {
		t.Errorf("host routes or sysctls changed while labs are up:\nbefore:\n%s\nduring:\n%s", before, during)
	}
	sameHost(t, links, hostLinks(t))
}
