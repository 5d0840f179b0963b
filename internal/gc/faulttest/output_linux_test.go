//go:build linux

package faulttest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/cli"
)

// fullDisk takes n bytes, then fails as a full file system does.
type fullDisk struct{ n int }

func (f *fullDisk) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
	}
	f.n -= len(p)
	return len(p), nil
}

// A report that cannot be written whole (its output on a full disk) ends
// `interlink bench --mode gc` with exit 3 and one line saying so, whether
// the header or the report's body is cut.
func TestReportOnFullDisk(t *testing.T) {
	tok := []byte(token)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	a := agenttest.Start(t, agent.Config{Token: tok, Software: "gc fault test"})
	b := agenttest.Start(t, agent.Config{Token: tok, Software: "gc fault test"})
	for _, room := range []int{0, 500} {
		var stderr bytes.Buffer
		disk := &fullDisk{n: room}
		code := cli.Main(context.Background(), []string{"bench", "--mode", "gc", "--token-file", file, "--time", "100ms", "a=" + a, "b=" + b}, disk, &stderr)
		want := "interlink: bench: write the report: write /dev/stdout: no space left on device\n"
		if code != 3 || stderr.String() != want {
			t.Errorf("%d bytes of room: exit %d, stderr %q; want exit 3 and %q", room, code, stderr.String(), want)
		}
	}
}

// The binary with its output redirected to a file on a full tmpfs (4 KiB,
// one page, taken by another file) exits 3 with one line on stderr. It
// needs root (mount).
func TestBinaryOnFullTmpfs(t *testing.T) {
	roottest.Require(t, "it mounts a tmpfs")
	agents, nodes := startAgents(t, "a", "b")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4k", "gcfault", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(interlinkBin(t), "bench", "--mode", "gc", "--token-file", tok, "--time", "300ms",
		nodes[0].Name+"="+agents["a"].addr, nodes[1].Name+"="+agents["b"].addr)
	cmd.Stdout, cmd.Stderr = out, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "write the report") || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("exit %v, stderr %q; want exit 3 and one line: no space left on device", err, stderr.String())
	}
}
