//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/wire"
)

// holdAgentStart (its %s the marker's path) runs the client's command and,
// when it is the agent's start, holds the session open (its exit status
// unsent) until the run's temp dir is gone, at most 30 s: the agent runs,
// but its PID never reaches interlink before the run ends. Once the agent
// listens it makes the marker, so the test ends the run at that moment
// rather than after a --timeout long enough for a loaded machine.
const holdAgentStart = `#!/bin/sh
sh -c "$SSH_ORIGINAL_COMMAND"
rc=$?
case $SSH_ORIGINAL_COMMAND in
*" agent --listen "*)
	i=0
	while [ $i -lt 300 ] && ! grep -qs "listening on" "$TMPDIR"/interlink-cluster.*/agent.log; do sleep 0.1; i=$((i+1)); done
	[ $i -lt 300 ] && : >'%s'
	i=0
	while [ $i -lt 300 ] && ls -d "$TMPDIR"/interlink-cluster.* >/dev/null 2>&1; do sleep 0.1; i=$((i+1)); done;;
esac
exit $rc
`

// The run ends (Ctrl-C) while node1's agent is starting: it runs on the
// node, but the start command has not answered with its PID. The cleanup
// still stops it by PID (from the PID file the start wrote first), so no
// process is left on node1 and the agent's port is free for the next run.
// Ctrl-C and --timeout end the run the same way (its context ends, the
// links are cut, every node is cleaned up); Ctrl-C can be sent the moment
// the wrapper holds the start, where a --timeout would have to be guessed.
func TestClusterEndsWhileAgentStarts(t *testing.T) {
	e := setup(t)
	// node1's sshd runs every command of the client's key through the
	// wrapper (authorized_keys is read at each login).
	marker := filepath.Join(e.dir, "agent-start-held")
	wrapper := write(t, filepath.Join(e.dir, "hold-agent-start"), fmt.Sprintf(holdAgentStart, marker), 0o755)
	ak := filepath.Join(filepath.Dir(e.tmp[0]), "authorized_keys")
	if _, err := os.Stat(ak); err != nil {
		t.Fatalf("node1's authorized_keys beside its session TMPDIR: %v", err)
	}
	write(t, ak, fmt.Sprintf("command=%q %s\n", wrapper, e.client.Authorized()), 0o600)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]))

	run := startJSONRun(t, e, kh)
	// node1's agent listens with its start held, and node2's listens (its
	// PID file written, so its cleanup has an agent to stop either way).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := os.Stat(marker)
		if err == nil && agentListens(e, 1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: node1's start not held with its agent listening (%v), or node2's agent not listening:\n%s", err, run.stderr)
		}
	}
	code, res := run.interrupt(t)
	if code != 3 {
		t.Errorf("exit %d, want 3 (stopped early): %s", code, run.stderr)
	}
	// Ctrl-C ends the run's context with the signal as its cause (Go's
	// signal.NotifyContext: "interrupt signal received").
	if !strings.Contains(res.Stopped, "interrupt") {
		t.Errorf("stopped %q, want the interrupt (Ctrl-C) named", res.Stopped)
	}
	n1 := res.Nodes[0]
	t.Logf("node1: status %s, error %q, agent PID %d, cleanup %+v", n1.Status, n1.Error, n1.AgentPID, n1.Cleanup)
	// The steps end with the agent's start, then the cleanup.
	if last := len(n1.Steps) - 2; n1.Status != cluster.StatusStopped || last < 0 || n1.Steps[last].Name != "agent" {
		t.Errorf("node1: status %s, steps %+v: want stopped during the agent's start", n1.Status, n1.Steps)
	}
	if !n1.Cleanup.Done || !strings.HasPrefix(n1.Cleanup.Stopped, "agent PID ") || n1.Cleanup.Removed == "" {
		t.Errorf("node1 cleanup %+v: want the started agent stopped by PID and the temp dir removed", n1.Cleanup)
	}
	if n2 := res.Nodes[1]; !n2.Cleanup.Done || !strings.HasPrefix(n2.Cleanup.Stopped, "agent PID ") {
		t.Errorf("node2 cleanup %+v: its agent listened and should be stopped", n2.Cleanup)
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if l := listening(t, e, 0, wire.DefaultPort); l != "" {
		t.Errorf("node1's agent port %d still held: %s", wire.DefaultPort, l)
	}
}

// jsonRun is interlink cluster --json on node1 and node2, run in ops.
type jsonRun struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuf
	done           chan struct{}
}

// startJSONRun starts interlink cluster --json on node1 and node2 with
// known_hosts kh and a --timeout that leaves ending the run to the test;
// the run is killed when the test ends.
func startJSONRun(t *testing.T, e *env, kh string) *jsonRun {
	t.Helper()
	r := &jsonRun{stdout: &syncBuf{}, stderr: &syncBuf{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "cluster", "198.18.0.1", "198.18.0.2", "--ssh-config", "none", "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--timeout", "10m", "--json")
	r.cmd.Stdout, r.cmd.Stderr, r.cmd.Env = r.stdout, r.stderr, noAgentEnv()
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := e.ops.Start(r.cmd); err != nil {
		t.Fatalf("start interlink cluster in ops: %v", err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() { r.cmd.Process.Kill(); <-r.done })
	return r
}

// interrupt sends the run Ctrl-C and returns its exit code and result
// once it has exited (at most 60 s).
func (r *jsonRun) interrupt(t *testing.T) (int, cluster.Result) {
	t.Helper()
	r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("cluster did not exit 60s after Ctrl-C:\n%s", r.stderr)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(r.stdout.String()), &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s", err, r.stderr)
	}
	return r.cmd.ProcessState.ExitCode(), res
}

// agentListens reports whether the agent of this run on node i has
// logged that it listens.
func agentListens(e *env, i int) bool {
	logs, _ := filepath.Glob(filepath.Join(e.tmp[i], "interlink-cluster.*", "agent.log"))
	for _, l := range logs {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "listening on") {
			return true
		}
	}
	return false
}

// listening returns the line of node i's /proc/net/tcp{,6} that listens
// on port, or "" when none does.
func listening(t *testing.T, e *env, i, port int) string {
	t.Helper()
	out, stderr, code := labuptest.Exec(t, e.nodes[i], exec.Command("cat", "/proc/net/tcp", "/proc/net/tcp6"), 10*time.Second)
	if code != 0 {
		t.Fatalf("read %s's sockets: exit %d: %s", e.nodes[i].Name(), code, stderr)
	}
	want := fmt.Sprintf(":%04X", port)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
