//go:build linux

package labtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// helperEnv makes this test binary a `lab up` that stops at a known point:
// "NAME POINT N [BUILTIN]" builds the routed topology (or BUILTIN) as NAME
// and, the N-th time Up reaches POINT (lab.PointState, PointNamespace,
// PointLink, PointService), says "paused" on stderr and waits to be
// killed. Agent services run $INTERLINK_LABTEST_BIN. It calls lab.Up as `lab up` does, with
// the hook passed as an option (the interlink binary has no hook).
const helperEnv = "INTERLINK_LABTEST_HELPER_UP"

// helperUp runs the helper when this process is one; it never returns then.
func helperUp() bool {
	v := os.Getenv(helperEnv)
	if v == "" {
		return false
	}
	f := strings.Fields(v)
	var n int
	if len(f) < 3 {
		f = append(f, "", "")
	}
	if _, err := fmt.Sscan(f[2], &n); err != nil {
		fmt.Fprintf(os.Stderr, "helper: %s=%q: %v\n", helperEnv, v, err)
		os.Exit(2)
	}
	name, point, builtin := f[0], f[1], "routed"
	if len(f) > 3 {
		builtin = f[3]
	}
	topo, err := lab.Load(builtin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	topo.Name = name
	hook := func(ctx context.Context, at string, k int) error {
		if at == point && k == n {
			fmt.Fprintf(os.Stderr, "paused at %s %d\n", at, k)
			time.Sleep(5 * time.Minute) // bounded, in case nobody kills us
			return fmt.Errorf("helper: not killed within 5 minutes")
		}
		return nil
	}
	if _, err := lab.Up(context.Background(), topo, lab.WithHook(hook), lab.WithBinary(os.Getenv("INTERLINK_LABTEST_BIN"))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "helper: Up finished without pausing")
	os.Exit(4)
	return true
}

// startPaused starts the helper for lab name and waits until it paused the
// n-th time at point. The test SIGKILLs it (killHelper); a cleanup does too.
func startPaused(t *testing.T, name, point string, n int, builtin ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d %s", helperEnv, name, point, n, strings.Join(builtin, "")),
		"INTERLINK_LABTEST_BIN="+binary)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killHelper(cmd) })
	paused := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var last string
		for sc.Scan() {
			if last = sc.Text(); strings.HasPrefix(last, "paused at") {
				paused <- last
				return
			}
		}
		paused <- "ended: " + last
	}()
	select {
	case line := <-paused:
		if !strings.HasPrefix(line, "paused at") {
			t.Fatalf("helper lab up %s did not pause at %s %d: %s", name, point, n, line)
		}
	case <-time.After(5 * time.Minute): // only against a hang: a loaded machine starts services slowly
		t.Fatalf("helper lab up %s never paused at %s %d", name, point, n)
	}
	return cmd
}

// killHelper SIGKILLs the helper (by its PID) and reaps it; again is harmless.
func killHelper(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}
