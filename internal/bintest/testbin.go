// Package bintest builds the interlink binary for tests that must run it as
// a separate process: inside lab nodes, as another user, or to deliver a
// signal to it.
//
// Linking the binary takes seconds and about ten test packages need it, so
// it is built once per source state and kept under Go's own cache directory
// ($GOCACHE/interlink-testbin/KEY/interlink, see cache.go); each caller gets
// a link to (or copy of) that binary in a temporary directory of its own.
package bintest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// mainPkg is what Build compiles.
const mainPkg = "github.com/interlink/interlink/cmd/interlink"

// Build returns the path of the interlink binary built from the current
// sources (CGO_ENABLED=0, as released), in a new temporary directory whose
// name starts with prefix, the directory and binary readable and
// executable by every user, and a function that removes the directory (and
// never the shared cache entry). Call it from TestMain or once per test.
func Build(prefix string) (bin string, cleanup func(), err error) {
	bin, cleanup, _, err = build(spec{pkg: mainPkg}, prefix)
	return bin, cleanup, err
}

// spec says what to build and where to keep it; tests build a module of
// their own into a cache of their own.
type spec struct {
	dir  string // where go runs, inside the module ("": the current directory)
	pkg  string // the main package to build
	root string // the cache directory ("": $GOCACHE/interlink-testbin)
}

// buildEnv is the environment every build and cache key uses: the
// caller's, with cgo off as in a release build.
func buildEnv() []string { return append(os.Environ(), "CGO_ENABLED=0") }

// errCompile marks a failed go build: the sources, not the cache, are at
// fault, so building again without the cache would only fail again.
var errCompile = errors.New("go build failed")

// build returns the binary from the cache, building it there when its key
// is new (built is then true). A cache that cannot be used (no GOCACHE, a
// read-only or full disk, a source tree it cannot read) falls back to a
// build into the caller's temporary directory, as before the cache.
func build(s spec, prefix string) (bin string, cleanup func(), built bool, err error) {
	env := buildEnv()
	c, err := openCache(s, env)
	if err == nil {
		bin, cleanup, built, err = c.binary(prefix)
		if err == nil || errors.Is(err, errCompile) {
			return bin, cleanup, built, err
		}
	}
	dir, cleanup, err := tempDir(prefix)
	if err != nil {
		return "", nil, false, err
	}
	bin = filepath.Join(dir, "interlink")
	if err := goBuild(s, env, bin); err != nil {
		cleanup()
		return "", nil, false, err
	}
	return bin, cleanup, true, nil
}

// tempDir makes a directory every user can reach, for a test that drops
// privileges, and the function that removes it.
func tempDir(prefix string) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("bintest: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	// MkdirTemp makes 0700: a test that drops privileges must reach it.
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("bintest: %w", err)
	}
	return dir, cleanup, nil
}

// goBuild compiles s.pkg to out, executable by every user.
func goBuild(s spec, env []string, out string) error {
	// No VCS stamp: a binary kept for the same sources under a later commit
	// must not claim the commit it was first built at.
	// -s -w: no symbol table or DWARF, as released (28 MB instead of 40).
	cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags=-s -w", "-o", out, s.pkg)
	cmd.Dir, cmd.Env = s.dir, env
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bintest: %w: %w\n%s", errCompile, err, msg)
	}
	// go build honours the umask; a dropped-privilege user must run it.
	if err := os.Chmod(out, 0o755); err != nil {
		return fmt.Errorf("bintest: %w", err)
	}
	return nil
}

// place gives the caller its own path to the cached binary src: a hard link
// in a new temporary directory (a copy across file systems), so evicting
// the cache entry later cannot take the binary away from a running test,
// and the caller's cleanup removes only its directory. An src that does not
// exist (evicted meanwhile) gives an error wrapping fs.ErrNotExist.
func place(prefix, src string) (bin string, cleanup func(), err error) {
	dir, cleanup, err := tempDir(prefix)
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "interlink")
	if err := os.Link(src, bin); err != nil {
		if err := copyFile(src, bin); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("bintest: %w", err)
		}
	}
	return bin, cleanup, nil
}

// copyFile copies src to a new file dst, mode 0755.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, 0o755)
}
