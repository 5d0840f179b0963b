//go:build linux

package labtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// node1's agent does not end on TERM: it is frozen (cgroup v2's freezer),
// as an agent stuck or too slow on a loaded node. Its recorded PID is
// timeout(1)'s, and the agent is timeout's child; KILL cannot be passed
// on, so killing timeout alone left the agent running, orphaned, its port
// held, while the cleanup reported it stopped. The cleanup kills
// timeout's process group: nothing is left on node1 and the port is free.
func TestClusterCleanupKillsStuckAgent(t *testing.T) {
	e := setup(t)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]))
	run := startJSONRun(t, e, kh)
	for deadline := time.Now().Add(90 * time.Second); !agentListens(e, 0) || !agentListens(e, 1); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agents not both listening after 90s:\n%s", run.stderr)
		}
	}
	tpid, agent := agentUnderTimeout(t, e)
	freeze(t, agent)
	// The run may have ended by itself (the mesh failing on node1's agent):
	// its cleanup is the one under test either way.
	code, res := run.interrupt(t)
	t.Logf("exit %d, stopped %q", code, res.Stopped)
	n1 := res.Nodes[0]
	t.Logf("node1: status %s, agent PID %d, cleanup %+v", n1.Status, n1.AgentPID, n1.Cleanup)
	if want := fmt.Sprintf("agent PID %d and its process group", tpid); !n1.Cleanup.Done || n1.Cleanup.Stopped != want || n1.Cleanup.Removed == "" {
		t.Errorf("node1 cleanup %+v: want done, %q stopped, the temp dir removed", n1.Cleanup, want)
	}
	if state(agent) != "" && state(agent) != "Z" {
		t.Errorf("node1's agent PID %d (%s) still running (state %s) after the cleanup", agent, cmdline(agent), state(agent))
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if l := listening(t, e, 0, wire.DefaultPort); l != "" {
		t.Errorf("node1's agent port %d still held: %s", wire.DefaultPort, l)
	}
}

// agentUnderTimeout returns the PID node1's agent.pid holds, timeout(1)'s,
// and the agent's, timeout's child in timeout's process group.
func agentUnderTimeout(t *testing.T, e *env) (tpid, agent int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.tmp[0], "interlink-cluster.*", "agent.pid"))
	if len(files) != 1 {
		t.Fatalf("node1's agent.pid: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	tpid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("node1's agent.pid holds %q", b)
	}
	if c := cmdline(tpid); !strings.HasPrefix(c, "timeout ") || pgid(tpid) != tpid {
		t.Fatalf("PID %d (%s) in group %d: want timeout(1) leading its own group", tpid, c, pgid(tpid))
	}
	for _, pid := range nodeProcs(t, e.nodes[0]) {
		if ppid(pid) == tpid {
			if c := cmdline(pid); !strings.Contains(c, " agent --listen ") || pgid(pid) != tpid {
				t.Fatalf("timeout's child PID %d (%s) in group %d: want the agent in timeout's group", pid, c, pgid(pid))
			}
			return tpid, pid
		}
	}
	t.Fatalf("timeout PID %d (%s) has no child in node1", tpid, cmdline(tpid))
	return 0, 0
}

// statFields returns a process's state, parent and process group from
// /proc, or nil when it is gone.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	if f := strings.Fields(rest); len(f) >= 3 {
		return f[:3]
	}
	return nil
}

func state(pid int) string {
	if f := statFields(pid); f != nil {
		return f[0]
	}
	return ""
}

func ppid(pid int) int {
	if f := statFields(pid); f != nil {
		n, _ := strconv.Atoi(f[1])
		return n
	}
	return 0
}

func pgid(pid int) int {
	if f := statFields(pid); f != nil {
		n, _ := strconv.Atoi(f[2])
		return n
	}
	return 0
}

// freeze moves pid into a cgroup (v2) of its own and freezes it: a frozen
// process takes no signal but KILL, a TERM stays pending, and SIGCONT
// does not wake it (GNU timeout sends CONT after it passes TERM on, so
// SIGSTOP would not hold the agent). When the test ends, pid is killed if
// it is still in that cgroup, and the cgroup is removed.
func freeze(t *testing.T, pid int) {
	t.Helper()
	root := cgroup2Root(t)
	dir := filepath.Join(root, fmt.Sprintf("t16-clusterkill-%d", pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("make cgroup: %v", err)
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			err := os.Remove(dir)
			if err == nil || os.IsNotExist(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("remove cgroup %s: %v", dir, err)
				return
			}
		}
	})
	for _, w := range []struct{ file, val string }{{"cgroup.procs", strconv.Itoa(pid)}, {"cgroup.freeze", "1"}} {
		if err := os.WriteFile(filepath.Join(dir, w.file), []byte(w.val), 0o644); err != nil {
			t.Fatalf("freeze PID %d: write %s: %v", pid, w.file, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events")); strings.Contains(string(b), "frozen 1") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d not frozen after 10s", pid)
		}
	}
}

// cgroup2Root is where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup,
// or /sys/fs/cgroup/unified beside v1's controllers).
func cgroup2Root(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := strings.Fields(s.Text()); len(m) > 2 && m[2] == "cgroup2" {
			return m[1]
		}
	}
	t.Skip("no cgroup v2 hierarchy mounted to freeze the agent in")
	return ""
}
