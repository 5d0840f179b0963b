// Package labuptest brings namespace labs up for tests and removes them when
// the test ends, pass or fail. Tests that use it need root (CAP_NET_ADMIN)
// and fail, not skip, without it.
package labuptest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/lab"
)

// Up builds topo (first removing a leftover of the same name from a killed
// run) and registers its removal with t.Cleanup.
func Up(t testing.TB, topo *lab.Topology) *lab.Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: lab tests build network namespaces")
	}
	if err := lab.CheckPrivilege(); err != nil {
		t.Fatalf("lab tests build network namespaces and need root: %v", err)
	}
	lab.Down(topo.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, topo)
	if err != nil {
		t.Fatalf("lab up %s: %v", topo.Name, err)
	}
	t.Cleanup(func() {
		if err := lab.Down(topo.Name); err != nil && !errors.Is(err, lab.ErrNotFound) {
			t.Errorf("lab down %s: %v", topo.Name, err)
		}
	})
	return l
}

// Node returns the named node of l or fails the test.
func Node(t testing.TB, l *lab.Lab, name string) *lab.Node {
	t.Helper()
	n, err := l.Node(name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ShortMain ends a lab test binary at once when it runs with -short: its
// tests build namespaces (as root) and take seconds each. Call it first in
// TestMain; it parses the test flags.
func ShortMain(what string) {
	flag.Parse()
	if testing.Short() {
		fmt.Printf("-short: %s skipped (they build network namespaces)\n", what)
		os.Exit(0)
	}
}

// SkipShort skips a test that builds the binary or runs it as a process
// when the tests run with -short.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and runs the interlink binary")
	}
}

// Main is the TestMain of a lab test package: it ends at once with -short
// (ShortMain), refuses to run without the privilege to build namespaces,
// runs each check (a missing peer program, say), builds the interlink
// binary into *bin (a temporary directory whose name starts with
// binPrefix, removed at the end), runs the tests and exits with their code.
func Main(m *testing.M, what string, bin *string, binPrefix string, checks ...func() error) {
	ShortMain(what)
	if err := lab.CheckPrivilege(); err != nil {
		fmt.Fprintf(os.Stderr, "%s build network namespaces and need root: %v\n", what, err)
		os.Exit(1)
	}
	for _, check := range checks {
		if err := check(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
			os.Exit(1)
		}
	}
	b, cleanup, err := bintest.Build(binPrefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}
