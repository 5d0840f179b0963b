//go:build linux

// Package labtest proves a replica end to end: interlink cluster runs over
// SSH against a lab (real OpenSSH sshd in its nodes), interlink lab
// replica makes a second lab of what that run measured, and the replica's
// own mesh and checks must give what the run gave.
package labtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	labuptest.Main(m, "replica lab tests", &bin, "t24-interlink-", labuptest.NeedSSHD)
}

// The shared helpers under the names this package's tests use.
var (
	write      = labuptest.WriteFile
	noAgentEnv = labuptest.NoSSHAgentEnv
)

// run runs interlink with args as a process on this host (in no lab node)
// and returns its stdout, stderr and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	timer := time.AfterFunc(5*time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Run()
	timer.Stop()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("interlink %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("$ interlink %s  (exit %d)\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return out.String(), errb.String(), code
}

// runIn runs interlink with args in lab node n.
func runIn(t *testing.T, n *lab.Node, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = noAgentEnv()
	return labuptest.Exec(t, n, cmd, 5*time.Minute)
}

// downAfter removes lab name when the test ends, whoever built it.
func downAfter(t *testing.T, name string) {
	lab.Down(name)
	t.Cleanup(func() {
		if err := lab.Down(name); err != nil && !strings.Contains(err.Error(), lab.ErrNotFound.Error()) {
			t.Errorf("lab down %s: %v", name, err)
		}
	})
}

// labDirs lists what the lab state directory holds, to prove that bad
// input built nothing.
func labDirs(t *testing.T) []string {
	d := os.Getenv("INTERLINK_LAB_DIR")
	if d == "" {
		d = lab.StateDir
	}
	m, _ := filepath.Glob(filepath.Join(d, "t24-*"))
	return m
}
