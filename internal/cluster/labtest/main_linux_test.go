//go:build linux

// Package labtest runs interlink cluster end to end: OpenSSH's sshd runs
// inside lab nodes with its own config, host key and authorized_keys in
// the test's temp dir, and interlink cluster reaches them over the lab
// network from an "ops" node, with real keys and known_hosts.
package labtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	labuptest.Main(m, "cluster lab tests", &bin, "t16-interlink-", labuptest.NeedSSHD)
}

// The shared helpers under the names this package's tests use.
var (
	write      = labuptest.WriteFile
	noAgentEnv = labuptest.NoSSHAgentEnv
)

type syncBuf = labuptest.Log

// start starts interlink with args as a process in node n, without the
// caller's ssh-agent; stop it by PID with the returned function (also
// called when the test ends). The channel is closed when it has exited.
func start(t testing.TB, n *lab.Node, out io.Writer, args ...string) (*exec.Cmd, func(), <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = noAgentEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		t.Fatalf("start interlink %v in %s: %v", args, n.Name(), err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			<-exited
		})
	}
	t.Cleanup(stop)
	return cmd, stop, exited
}

// run runs interlink with args as a process in node n and returns its
// stdout, stderr and exit code.
func run(t *testing.T, n *lab.Node, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = noAgentEnv()
	return labuptest.Exec(t, n, cmd, 3*time.Minute)
}

// nodeProcs lists the PIDs of the processes in node n's network namespace.
func nodeProcs(t testing.TB, n *lab.Node) []int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(lab.NetnsDir, n.Namespace()), &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && l == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cmdline is a process's command line, for messages.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
