//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/testlab"
	"github.com/interlink/interlink/internal/wire"
)

// holdAgentStart runs the client's command and, when it is the agent's
// start, holds the session open (its exit status unsent) until the run's
// temp dir is gone, at most 30 s: the agent runs, but its PID never
// reaches interlink before the run ends.
const holdAgentStart = `#!/bin/sh
sh -c "$SSH_ORIGINAL_COMMAND"
rc=$?
case $SSH_ORIGINAL_COMMAND in
*" agent --listen "*)
	i=0
	while [ $i -lt 300 ] && ls -d "$TMPDIR"/interlink-cluster.* >/dev/null 2>&1; do sleep 0.1; i=$((i+1)); done;;
esac
exit $rc
`

// --timeout ends the run while node1's agent is starting: it runs on the
// node, but the start command has not answered with its PID. The cleanup
// still stops it by PID (from the PID file the start wrote first), so no
// process is left on node1 and the agent's port is free for the next run.
func TestClusterTimeoutWhileAgentStarts(t *testing.T) {
	e := setup(t)
	// node1's sshd runs every command of the client's key through the
	// wrapper (authorized_keys is read at each login).
	wrapper := write(t, filepath.Join(e.dir, "hold-agent-start"), holdAgentStart, 0o755)
	ak := filepath.Join(filepath.Dir(e.tmp[0]), "authorized_keys")
	if _, err := os.Stat(ak); err != nil {
		t.Fatalf("node1's authorized_keys beside its session TMPDIR: %v", err)
	}
	write(t, ak, fmt.Sprintf("command=%q %s\n", wrapper, e.client.Authorized()), 0o600)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]))

	const timeout = 25 * time.Second
	cmd := exec.Command(bin, "cluster", "198.18.0.1", "198.18.0.2", "--ssh-config", "none", "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--timeout", timeout.String(), "--json")
	cmd.Env = noAgentEnv()
	out, stderr, code := testlab.Exec(t, e.ops, cmd, timeout+60*time.Second)
	if code != 3 {
		t.Errorf("exit %d, want 3 (stopped early): %s", code, stderr)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s", err, stderr)
	}
	if !strings.Contains(res.Stopped, "--timeout "+timeout.String()+" reached") {
		t.Errorf("stopped %q, want the --timeout named", res.Stopped)
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

// listening returns the line of node i's /proc/net/tcp{,6} that listens
// on port, or "" when none does.
func listening(t *testing.T, e *env, i, port int) string {
	t.Helper()
	out, stderr, code := testlab.Exec(t, e.nodes[i], exec.Command("cat", "/proc/net/tcp", "/proc/net/tcp6"), 10*time.Second)
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
