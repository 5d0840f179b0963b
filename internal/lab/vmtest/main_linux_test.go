//go:build linux

// Package vmtest tests labs whose nodes are virtual machines with kernels
// of their own (qemu, Debian's packaged kernel): the built-in vmjumbo
// end to end, and that nothing is left after a failed boot or a kill -9 of
// lab up.
package vmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/vm"
	"github.com/interlink/interlink/internal/vm/cache"
)

// binary is the interlink binary the guests run and the kill -9 test
// starts.
var binary string

func TestMain(m *testing.M) {
	labuptest.ShortMain("VM lab tests")
	bin, cleanup, err := bintest.Build("interlink-vmtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// need fails the test, saying what to install, when this machine cannot
// run VM nodes; it returns the kernel, fetched into the cache once (a
// stale package list is refreshed once, as on a fresh CI machine).
func need(t *testing.T) *cache.Kernel {
	t.Helper()
	roottest.Require(t, "VM labs: taps, namespaces, the kernel cache")
	for _, p := range []string{vm.Qemu, "apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not found: apt-get install qemu-system-x86 busybox-static", p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	k, err := cache.DebianKernel(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("step kernel: %s (%s) in %s", k.Release, k.Source, time.Since(start).Round(time.Millisecond))
	return k
}

// step logs how long a step took.
func step(t *testing.T, name string, start time.Time) {
	t.Helper()
	t.Logf("step %s: %s", name, time.Since(start).Round(time.Millisecond))
}
