//go:build linux

package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sh runs a command as the node's shell would, here.
func sh(t *testing.T, cmd string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", cmd).Output()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, cmd)
	}
	return strings.TrimSpace(string(out))
}

// running says whether pid is a process that has not exited (a zombie
// has).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// agentNode is a node here whose interlink is testdata's script.
func agentNode(t *testing.T, script string) *node {
	bin, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	// The stubborn agent ignores TERM however long it is given: 0.3 s of
	// grace tests the same path as the run's 3 s.
	return &node{dir: t.TempDir(), bin: bin, grace: 300 * time.Millisecond}
}

func fakeAgentNode(t *testing.T) *node { return agentNode(t, "fake-agent.sh") }

// The start's answer (the PID) never came back, as when the run ends
// while the agent starts: the cleanup finds the agent by its PID file,
// stops it, reports it, and removes the temp dir.
func TestCleanupStopsAgentWhosePIDWasLost(t *testing.T) {
	n := fakeAgentNode(t)
	started, err := strconv.Atoi(sh(t, n.startSh("127.0.0.1:1", time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	// Stopped by PID should this test fail before the cleanup does it.
	t.Cleanup(func() { syscall.Kill(started, syscall.SIGKILL) })
	waitListening(t, n.dir)
	dir := n.dir // the PID is not known to the cleanup: n.pid is 0
	want := strconv.Itoa(started)
	if _, pg, _ := procIDs(started); pg == started {
		want = "-" + want // timeout(1)'s PID, leading the agent's group
	}
	if got := sh(t, n.cleanupSh()); got != want {
		t.Errorf("cleanup printed %q, want %q, the agent's PID", got, want)
	}
	if running(started) {
		t.Errorf("agent PID %d still running after the cleanup", started)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed: %v", dir, err)
	}
}

// The cleanup's stop mark came first: the process that would become the
// agent writes its PID, sees the mark, and exits without running it.
func TestStopMarkPreventsAgent(t *testing.T) {
	n := fakeAgentNode(t)
	if err := os.Mkdir(filepath.Join(n.dir, agentStopMark), 0o700); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(sh(t, n.startSh("127.0.0.1:1", time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	for deadline := time.Now().Add(60 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) { // only against a hang
		if time.Now().After(deadline) {
			t.Fatalf("PID %d never ended after the start saw the stop mark", pid)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(n.dir, "agent.log")); strings.Contains(string(b), "listening") {
		t.Errorf("the agent ran despite the stop mark: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(n.dir, agentPIDFile)); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("PID file holds %q, want %d", b, pid)
	}
	if got := sh(t, n.cleanupSh()); got != "" {
		t.Errorf("cleanup printed %q: nothing ran to stop", got)
	}
}
