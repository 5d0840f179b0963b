// Package testbin builds the interlink binary for tests that must run it as
// a separate process: inside lab nodes, as another user, or to deliver a
// signal to it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles cmd/interlink (CGO_ENABLED=0 and without symbol table
// and DWARF, -ldflags=-s -w, as released) into a new
// temporary directory whose name starts with prefix, readable and
// executable by every user, and returns the binary's path and a function
// that removes the directory. Call it from TestMain.
func Build(prefix string) (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("testbin: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	// MkdirTemp makes 0700: a test that drops privileges must reach it.
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("testbin: %w", err)
	}
	bin = filepath.Join(dir, "interlink")
	// -s -w as the Makefile's release build: the link skips writing DWARF,
	// which took half its time (each lab test package links the binary),
	// and the binary is a third smaller where tests copy it (cluster's SSH).
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "github.com/interlink/interlink/cmd/interlink")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("testbin: go build: %w\n%s", err, out)
	}
	return bin, cleanup, nil
}
