//go:build linux

package cluster

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/casetest"
)

// The cleanup of an agent that does not end on TERM (stuck, or too slow on
// a loaded node) runs the node's sh here, with the real timeout(1) and
// testdata/stubborn-agent.sh as the agent: it ignores TERM, so only KILL
// ends it.

func stubbornNode(t *testing.T) *node { return agentNode(t, "stubborn-agent.sh") }

// procIDs returns a process's parent and process group from /proc.
func procIDs(pid int) (ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest) // state ppid pgrp ...
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return ppid, pgid, err1 == nil && err2 == nil
}

// childOf waits (at most 10 s) for the running child of parent.
func childOf(t *testing.T, parent int) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) { // only against a hang
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if pp, _, ok := procIDs(pid); ok && pp == parent && running(pid) {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d has no child after 10s", parent)
		}
	}
}

// waitListening waits (at most 10 s) for the agent of dir to say it listens.
func waitListening(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) { // only against a hang
		if b, _ := os.ReadFile(filepath.Join(dir, "agent.log")); strings.Contains(string(b), "listening on") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("agent not listening after 10s")
		}
	}
}

// startUnderTimeout starts the stubborn agent as the run does, under
// GNU timeout(1), and returns timeout's PID (the one the run records) and
// the agent's, both killed by PID when the test ends.
func startUnderTimeout(t *testing.T, n *node) (tpid, agent int) {
	t.Helper()
	tpid, err := strconv.Atoi(sh(t, n.startSh("127.0.0.1:1", time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(tpid, syscall.SIGKILL) })
	agent = childOf(t, tpid)
	t.Cleanup(func() { syscall.Kill(agent, syscall.SIGKILL) })
	if _, pg, _ := procIDs(tpid); pg != tpid {
		t.Skipf("timeout(1) here (PID %d, %s) does not lead its own process group (%d): not GNU timeout", tpid, cmdlineOf(tpid), pg)
	}
	waitListening(t, n.dir)
	return tpid, agent
}

func cmdlineOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// The recorded PID is timeout(1)'s and the agent, its child, does not end
// on TERM: the cleanup kills timeout's whole process group after 3 s, so
// the agent does not outlive timeout (KILL is not passed on). The cleanup
// runs in each shell a node may have: dash, bash, and busybox's sh with
// busybox's ps (no -p, so the process group comes from /proc).
func TestCleanupKillsTheAgentUnderTimeout(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, shell func(*testing.T, string) string) {
		n := stubbornNode(t)
		tpid, agent := startUnderTimeout(t, n)
		n.pid = tpid
		t0 := time.Now()
		got := shell(t, n.cleanupSh())
		took := time.Since(t0)
		if want := fmt.Sprintf("-%d", tpid); got != want {
			t.Errorf("cleanup printed %q, want %q (timeout's PID, its group stopped)", got, want)
		}
		if running(agent) {
			t.Errorf("agent PID %d (%s), timeout's child, still running after the cleanup", agent, cmdlineOf(agent))
		}
		if running(tpid) {
			t.Errorf("timeout PID %d still running after the cleanup", tpid)
		}
		// TERM ignored: the grace waited out, then KILL. Not before
		// the grace (a wait cannot end early); how long after is the
		// machine's load, and the shell's return shows the waits end.
		if took < n.grace {
			t.Errorf("cleanup took %s, want the %s TERM wait then KILL", took, n.grace)
		}
	})
}

// nodeShells runs a command as each kind of node's shell would: the
// command's stdout, trimmed; a failure or an exit other than 0 fails the
// test.
func nodeShells(t *testing.T) map[string]func(*testing.T, string) string {
	run := func(sh string, env []string) func(*testing.T, string) string {
		return func(t *testing.T, cmd string) string {
			t.Helper()
			c := exec.Command(sh, "-c", cmd)
			c.Env = env
			out, err := c.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", sh, err, cmd)
			}
			return strings.TrimSpace(string(out))
		}
	}
	shells := map[string]func(*testing.T, string) string{}
	for _, s := range []string{"dash", "bash"} {
		if p, err := exec.LookPath(s); err == nil {
			shells[s] = run(p, nil)
		}
	}
	if bb, err := exec.LookPath("busybox"); err == nil {
		dir := t.TempDir()
		for _, c := range []string{"sh", "ps", "sleep", "cat", "mkdir", "rm"} {
			if err := os.Symlink(bb, filepath.Join(dir, c)); err != nil {
				t.Fatal(err)
			}
		}
		shells["busybox"] = run(filepath.Join(dir, "sh"), []string{"PATH=" + dir})
	}
	if len(shells) == 0 {
		t.Fatal("none of dash, bash, busybox here")
	}
	return shells
}

// eachShell runs f once for each of nodeShells, all at once: the cases
// wait on processes and time nothing closely.
func eachShell(t *testing.T, f func(t *testing.T, shell func(*testing.T, string) string)) {
	shells := nodeShells(t)
	names := slices.Sorted(maps.Keys(shells))
	casetest.AtOnce(t, len(names), func(i int) string { return names[i] }, func(t *testing.T, i int) { f(t, shells[names[i]]) })
}

// timeout(1) was killed on its own (as the cleanup used to kill it) and
// left the agent running in its group: the cleanup still stops the group
// and says so, rather than finding nothing at the PID and leaving it.
func TestCleanupKillsTheGroupTimeoutLeft(t *testing.T) {
	t.Parallel()
	n := stubbornNode(t)
	tpid, agent := startUnderTimeout(t, n)
	syscall.Kill(tpid, syscall.SIGKILL)
	for deadline := time.Now().Add(60 * time.Second); running(tpid); time.Sleep(20 * time.Millisecond) { // only against a hang
		if time.Now().After(deadline) {
			t.Fatalf("timeout PID %d never ended after KILL", tpid)
		}
	}
	n.pid = tpid
	if got, want := sh(t, n.cleanupSh()), fmt.Sprintf("-%d", tpid); got != want {
		t.Errorf("cleanup printed %q, want %q", got, want)
	}
	if running(agent) {
		t.Errorf("agent PID %d, left by timeout, still running after the cleanup", agent)
	}
}

// A node without timeout(1): the PID is the agent itself, in the process
// group of the start's session. The cleanup, in each shell, kills the
// agent and nothing else of that group (here a process that leads it
// stands in for the session).
func TestCleanupWithoutTimeoutSparesTheGroup(t *testing.T) {
	t.Parallel()
	path := t.TempDir() // the commands the start uses, no timeout
	for _, c := range []string{"sh", "cat", "sleep"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(path, c)); err != nil {
			t.Fatal(err)
		}
	}
	eachShell(t, func(t *testing.T, shell func(*testing.T, string) string) {
		n := stubbornNode(t)
		leader, agent := startWithoutTimeout(t, n, path)
		n.pid = agent
		if got := shell(t, n.cleanupSh()); got != strconv.Itoa(agent) {
			t.Errorf("cleanup printed %q, want the agent's PID %d alone", got, agent)
		}
		if running(agent) {
			t.Errorf("agent PID %d still running after the cleanup", agent)
		}
		if !running(leader) {
			t.Errorf("PID %d, the leader of the agent's process group, was killed with it", leader)
		}
	})
}

// startWithoutTimeout starts the stubborn agent as the run does with
// PATH=path (no timeout(1) in it) from a shell that leads a process group
// of its own and then stays in it (as sleep, at most 60 s). It returns
// that shell's PID and the agent's, both killed when the test ends.
func startWithoutTimeout(t *testing.T, n *node, path string) (leader, agent int) {
	t.Helper()
	start := exec.Command("sh", "-c", n.startSh("127.0.0.1:1", time.Minute)+"\nexec sleep 60")
	start.Env, start.SysProcAttr = []string{"PATH=" + path}, &syscall.SysProcAttr{Setpgid: true}
	out, err := start.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { start.Process.Kill(); start.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	agent, err2 := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || err2 != nil {
		t.Fatalf("start printed %q: %v %v", line, err, err2)
	}
	t.Cleanup(func() { syscall.Kill(agent, syscall.SIGKILL) })
	waitListening(t, n.dir)
	leader = start.Process.Pid
	if _, pg, _ := procIDs(agent); pg != leader {
		t.Fatalf("agent PID %d (%s) in group %d, want the start's %d: did timeout(1) run?", agent, cmdlineOf(agent), pg, leader)
	}
	return leader, agent
}

// The cleanup's command passes where a path MTU blackhole stalled the run
// (a 9000 interface, a port at 1500) only if it fits in one segment of
// 1500: 1500 less IPv6's 40 and TCP's 32 bytes of headers, and about 70
// of SSH's packet (channel request, padding, MAC) leave 1358 bytes. The
// budget keeps a margin, with a temp dir's path of 100 bytes (mktemp's
// under /tmp takes 31).
func TestCleanupCommandFitsOneSegment(t *testing.T) {
	const budget = 1200
	dir := "/" + strings.Repeat("d", 99)
	for _, pid := range []int{0, 4194304} { // unknown (read from the PID file); the largest pid_max
		n := &node{dir: dir, pid: pid}
		if l := len(n.cleanupSh()); l > budget {
			t.Errorf("PID %d: cleanup command of %d bytes, over the budget of %d:\n%s", pid, l, budget, n.cleanupSh())
		} else {
			t.Logf("PID %d: %d bytes", pid, l)
		}
	}
}

// The PID did not lead a group when the cleanup began, as timeout(1)'s
// just before its setpgid (a PID from the PID file, the run ending while
// the agent starts), and TERM did not end it: before KILL the cleanup
// looks again and kills the group the PID has made since, agent and all.
func TestCleanupKillsAGroupMadeAfterItBegan(t *testing.T) {
	t.Parallel()
	n := stubbornNode(t)
	n.grace = time.Second
	// TERM ignored until timeout(1) installs its handler; timeout runs
	// (and makes its group) 0.2 s after the start, before the KILL at 1 s.
	c := exec.Command("sh", "-c", `trap '' TERM; sleep 0.2; exec timeout 60 "$0" agent --listen 127.0.0.1:1`, n.bin)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p := c.Process.Pid
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	if _, pg, _ := procIDs(p); pg == p {
		t.Fatalf("PID %d leads its group before timeout(1) ran", p)
	}
	n.pid = p
	got := sh(t, n.cleanupSh())
	if want := fmt.Sprintf("-%d", p); got != want {
		t.Errorf("cleanup printed %q, want %q (the group found before KILL)", got, want)
	}
	c.Wait() // reap timeout, then look for what was in its group
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && running(pid) {
			if _, pg, ok := procIDs(pid); ok && pg == p {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("PID %d (%s) of timeout's group %d still running after the cleanup", pid, cmdlineOf(pid), p)
			}
		}
	}
}
