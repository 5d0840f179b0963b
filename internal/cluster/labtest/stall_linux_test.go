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
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

// stallTopology: SSH runs over a 9000 management switch where node3's
// port was left at 1500. The TCP handshake, SSH's key exchange and short
// commands fit in 1500-byte frames and pass; the binary's copy goes in
// full 8948-byte segments, which the port drops without a trace. That is
// issue 27's lab: the copy to node3 stalls mid-transfer, for real.
const stallTopology = `name: t27-stall
switches:
  mgmt: {mtu: 9000}
nodes:
  ops:
    links:
      - {name: eth0, switch: mgmt, addresses: [198.18.20.100/24]}
  node1:
    links:
      - {name: eth0, switch: mgmt, addresses: [198.18.20.1/24]}
  node2:
    links:
      - {name: eth0, switch: mgmt, addresses: [198.18.20.2/24]}
  node3:
    links:
      - {name: eth0, switch: mgmt, addresses: [198.18.20.3/24], port_mtu: 1500}
`

// stallEnv is the stall lab with sshd in node1..node3.
func stallEnv(t *testing.T) *env {
	topo, err := lab.Parse("t27-stall.yaml", []byte(stallTopology))
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the lab, so it runs after the lab is down.
	var netns []string
	t.Cleanup(func() {
		for _, p := range netns {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("namespace %s left after the lab went down", p)
			}
		}
	})
	e := &env{l: labuptest.Up(t, topo), client: labuptest.NewKey(t), sshd: map[string]int{}, dir: t.TempDir()}
	e.ops = labuptest.Node(t, e.l, "ops")
	netns = append(netns, filepath.Join(lab.NetnsDir, e.ops.Namespace()))
	var lines []string
	for i := 1; i <= 3; i++ {
		n := labuptest.Node(t, e.l, fmt.Sprintf("node%d", i))
		netns = append(netns, filepath.Join(lab.NetnsDir, n.Namespace()))
		e.nodes = append(e.nodes, n)
		e.hostKeys = append(e.hostKeys, labuptest.NewKey(t))
		pid, tmp := labuptest.SSHD(t, n, fmt.Sprintf("198.18.20.%d", i), e.hostKeys[i-1], e.client)
		e.sshd[n.Name()], e.tmp = pid, append(e.tmp, tmp)
		lines = append(lines, fmt.Sprintf("198.18.20.%d %s", i, e.hostKeys[i-1].Authorized()))
	}
	write(t, filepath.Join(e.dir, "id"), string(e.client.Private), 0o600)
	e.knownHosts(t, "known_hosts", lines...)
	// Runs first at the end: a run that misbehaved can leave sshd session
	// processes stuck on a connection nobody closes, and they hold sshd's
	// log pipe open. Each is killed by its PID (the test fails over them
	// in clean before that).
	t.Cleanup(func() {
		for _, n := range append([]*lab.Node{e.ops}, e.nodes...) {
			for _, pid := range nodeProcs(t, n) {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
	})
	return e
}

func (e *env) stallArgs(extra ...string) []string {
	return append([]string{"cluster", "198.18.20.1", "198.18.20.2", "198.18.20.3", "--ssh-config", "none",
		"--known-hosts", filepath.Join(e.dir, "known_hosts"), "--identity", filepath.Join(e.dir, "id")}, extra...)
}

// timed runs interlink in ops and returns its stdout, exit code and how
// long it took; it is killed after limit (a run that outlives its own
// --timeout by that much is the bug).
func (e *env) timed(t *testing.T, limit time.Duration, args ...string) (string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = noAgentEnv()
	t0 := time.Now()
	out, _, code := labuptest.Exec(t, e.ops, cmd, limit)
	return out, code, time.Since(t0)
}

// opsLeft fails the test if a process is left in the ops node (the run's
// own, or anything it started).
func (e *env) opsLeft(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pids := nodeProcs(t, e.ops)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				t.Errorf("left in ops: PID %d %s", pid, cmdline(pid))
			}
			return
		}
	}
}

func (e *env) clean(t *testing.T) {
	t.Helper()
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	e.opsLeft(t)
}

// Issue 27: node3's SSH path drops large segments, so the copy of the
// binary to it stalls mid-transfer. The progress watchdog cuts node3 off
// with the blackhole named while node1 and node2 finish; --timeout and
// Ctrl-C end a run whose watchdog has not fired yet within seconds; and
// every run removes what it copied, on node3 too, over a new connection.
func TestClusterStall(t *testing.T) {
	e := stallEnv(t)

	t.Run("watchdog", func(t *testing.T) {
		collect := t.TempDir()
		out, code, took := e.timed(t, 3*time.Minute, e.stallArgs("--stall-timeout", "5s", "--timeout", "2m", "--collect", collect, "--json")...)
		t.Logf("run took %s", took.Round(time.Millisecond))
		if code != 3 {
			t.Errorf("exit %d, want 3 (node3 not covered)", code)
		}
		var res cluster.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("cluster --json: %v", err)
		}
		if res.Stopped != "" {
			t.Errorf("stopped %q after %s: the watchdog (5s) should have cut node3 off before --timeout", res.Stopped, took)
		}
		for _, n := range res.Nodes[:2] {
			if n.Status != cluster.StatusOK || n.Check == nil || n.Bundle == "" || !n.Cleanup.Done {
				t.Errorf("%s: status %s, check %v, bundle %q, cleanup %+v: %s", n.Name, n.Status, n.Check != nil, n.Bundle, n.Cleanup, n.Error)
			}
		}
		n3 := res.Nodes[2]
		if n3.Status != cluster.StatusFailed || n3.Cause != cluster.CauseStall || n3.Stall == nil {
			t.Fatalf("node3: status %s cause %q stall %+v (%s), want failed (stall)", n3.Status, n3.Cause, n3.Stall, n3.Error)
		}
		for _, s := range []string{"copy binary: transfer stopped moving at ", "likely an MTU blackhole on the management path", "check the path MTU to 198.18.20.3"} {
			if !strings.Contains(n3.Error, s) {
				t.Errorf("node3 error %q lacks %q", n3.Error, s)
			}
		}
		if st := n3.Stall; st.Step != "copy binary" || st.TotalBytes < 1<<20 || st.Bytes >= st.TotalBytes || st.Idle < 5*time.Second {
			t.Errorf("node3 stall %+v", st)
		}
		if !n3.Cleanup.Done || n3.Cleanup.Removed == "" {
			t.Errorf("node3 cleanup %+v: its temp dir should be removed over a new connection", n3.Cleanup)
		}
		var text strings.Builder
		cluster.WriteText(&text, &res)
		t.Logf("as text:\n%s", text.String())
		for _, s := range []string{"failed (stall)", " over a new connection)", "198.18.20.3: copy binary: transfer stopped moving at "} {
			if !strings.Contains(text.String(), s) {
				t.Errorf("text report lacks %q", s)
			}
		}
		if res.Mesh == nil || len(res.Mesh.Paths) != 2 {
			t.Errorf("mesh %+v (skipped %q): want node1 <-> node2", res.Mesh, res.MeshSkipped)
		}
		e.clean(t)
	})

	// The watchdog (default 30s) has not fired when --timeout (12s) ends
	// the run: the run ends at it all the same (node3 stopped by the
	// timeout, not failed by the watchdog). (12 s puts
	// it after the agents' start, this test's subject being the stalled
	// copy; a run ending during an agent's start is
	// TestClusterEndsWhileAgentStarts.)
	t.Run("timeout", func(t *testing.T) {
		const timeout = 12 * time.Second
		out, code, took := e.timed(t, timeout+60*time.Second, e.stallArgs("--timeout", timeout.String(), "--json")...)
		t.Logf("run took %s with --timeout %s", took.Round(time.Millisecond), timeout)
		if code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		var res cluster.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("cluster --json: %v", err)
		}
		if !strings.Contains(res.Stopped, "--timeout "+timeout.String()+" reached") {
			t.Errorf("stopped %q", res.Stopped)
		}
		if n3 := res.Nodes[2]; n3.Status != cluster.StatusStopped || !n3.Cleanup.Done {
			t.Errorf("node3: status %s, cleanup %+v: %s", n3.Status, n3.Cleanup, n3.Error)
		}
		e.clean(t)
	})

	// Ctrl-C while the copy to node3 is stalled (node1 and node2 done and
	// waiting): the run ends at it, stopped early (not by the 30 s
	// watchdog nor the 10 min timeout), and still cleans up.
	t.Run("interrupt", func(t *testing.T) {
		out := &syncBuf{}
		cmd, _, done := start(t, e.ops, out, e.stallArgs("--timeout", "10m")...)
		stalled := func() bool {
			agents := 0
			for _, l := range e.glob("interlink-cluster.*/agent.log") {
				if b, _ := os.ReadFile(l); strings.Contains(string(b), "listening on") {
					agents++
				}
			}
			copying, _ := filepath.Glob(filepath.Join(e.tmp[2], "interlink-cluster.*", "interlink"))
			return agents == 2 && len(copying) == 1
		}
		for deadline := time.Now().Add(90 * time.Second); !stalled(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("node1 and node2 not set up with node3's copy under way after 90s:\n%s", out)
			}
		}
		// Into the stall: node3's first full segment was dropped when its
		// copy began, and TCP is retransmitting it.
		time.Sleep(time.Second)
		t0 := time.Now()
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Minute): // only against a hang
			t.Fatalf("cluster never exited after Ctrl-C:\n%s", out)
		}
		took := time.Since(t0)
		t.Logf("exit %d %s after Ctrl-C:\n%s", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), out)
		if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(out.String(), "STOPPED EARLY") {
			t.Errorf("exit %d, want 3 and the report saying it stopped early", code)
		}
		e.clean(t)
	})
}
