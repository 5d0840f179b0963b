package bintest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// module writes a small main module that embeds a file, with a test file
// and test data beside it, and returns its directory.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":             "module example.com/tb\n\ngo 1.22\n",
		"main.go":            "package main\n\nimport _ \"embed\"\n\n//go:embed msg/hello.txt\nvar msg string\n\nfunc main() { print(msg) }\n",
		"msg/hello.txt":      "hello",
		"main_test.go":       "package main\n",
		"testdata/input":     "data",
		".hidden/ignored.go": "package ignored\n",
	} {
		write(t, dir, name, text)
	}
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs checks that bin prints want, and that a dropped-privilege user can
// reach and run it: the directory and the binary are 0755.
func runs(t *testing.T, bin, want string) {
	t.Helper()
	for _, p := range []string{filepath.Dir(bin), bin} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o755 != 0o755 {
			t.Errorf("%s: %v, mode %v; want every user to read and run it", p, err, fi.Mode())
		}
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil || string(out) != want {
		t.Errorf("%s: %v, %q; want %q", bin, err, out, want)
	}
}

func key(t *testing.T, s spec) string {
	t.Helper()
	c, err := openCache(s, buildEnv())
	if err != nil {
		t.Fatal(err)
	}
	return c.key
}

// TestCacheBuildsOnce: the second Build of unchanged sources links the
// cached binary instead of building; tests and test data do not change the
// key, a source or an embedded file does; a new entry evicts the old one
// and abandoned temporary builds, not one in progress.
func TestCacheBuildsOnce(t *testing.T) {
	s := spec{dir: module(t), pkg: ".", root: filepath.Join(t.TempDir(), "cache")}
	bin, cleanup, built, err := build(s, "tb-")
	if err != nil || !built {
		t.Fatalf("first build: built %v, %v", built, err)
	}
	runs(t, bin, "hello")
	k := key(t, s)
	entry := filepath.Join(s.root, k, "interlink")
	cleanup()
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("cleanup removed the cache entry: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s: %v", filepath.Dir(bin), err)
	}
	bin2, cleanup2, built, err := build(s, "tb-")
	if err != nil || built || bin2 == bin {
		t.Fatalf("second build of the same sources: built %v, path %s (first %s), %v", built, bin2, bin, err)
	}
	defer cleanup2()
	runs(t, bin2, "hello")

	write(t, s.dir, "main_test.go", "package main\n\n// changed\n")
	write(t, s.dir, "testdata/input", "other data")
	write(t, s.dir, ".hidden/ignored.go", "package ignored // changed\n")
	if k2 := key(t, s); k2 != k {
		t.Errorf("a test file or test data changed the key")
	}
	write(t, s.dir, "msg/hello.txt", "hello again")
	k3 := key(t, s)
	if k3 == k {
		t.Errorf("a changed embedded file kept the key")
	}
	write(t, s.dir, "main.go", strings.Replace(readFile(t, s.dir, "main.go"), "print(msg)", "print(msg, \"!\")", 1))
	if k4 := key(t, s); k4 == k3 || k4 == k {
		t.Errorf("a changed source file kept the key")
	}

	stale, busy := filepath.Join(s.root, ".build-stale"), filepath.Join(s.root, ".build-busy")
	for _, d := range []string{stale, busy} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleBuild)
	os.Chtimes(stale, old, old)
	bin3, cleanup3, built, err := build(s, "tb-")
	if err != nil || !built {
		t.Fatalf("build after a change: built %v, %v", built, err)
	}
	defer cleanup3()
	runs(t, bin3, "hello again!")
	runs(t, bin2, "hello") // evicting the entry leaves a test its binary
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("the old entry is still there: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an abandoned build directory is still there: %v", err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("a build in progress was removed: %v", err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCacheConcurrent: test packages starting together each get a whole
// binary, and one whose entry was removed under it builds it again.
func TestCacheConcurrent(t *testing.T) {
	s := spec{dir: module(t), pkg: ".", root: filepath.Join(t.TempDir(), "cache")}
	var wg sync.WaitGroup
	var builds atomic.Int32
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bin, cleanup, built, err := build(s, "tb-")
			if err != nil {
				t.Error(err)
				return
			}
			if built {
				builds.Add(1)
			}
			defer cleanup()
			runs(t, bin, "hello")
		}()
	}
	wg.Wait()
	// The cache's lock lets one of them build; the others wait and link it.
	if n := builds.Load(); n != 1 {
		t.Errorf("%d of 3 packages starting together built the binary, want 1", n)
	}
	if err := os.RemoveAll(filepath.Join(s.root, key(t, s))); err != nil {
		t.Fatal(err)
	}
	bin, cleanup, built, err := build(s, "tb-")
	if err != nil || !built {
		t.Fatalf("after the entry was removed: built %v, %v", built, err)
	}
	defer cleanup()
	runs(t, bin, "hello")
	if names := readDir(t, s.root); len(names) != 2 {
		t.Errorf("cache holds %v, want the one entry and its lock", names)
	}
}

// TestCacheUnusable: a cache directory that cannot be made falls back to a
// build into the caller's directory; sources that do not compile are an
// error either way.
func TestCacheUnusable(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	write(t, filepath.Dir(blocker), "file", "not a directory")
	s := spec{dir: module(t), pkg: ".", root: filepath.Join(blocker, "cache")}
	bin, cleanup, built, err := build(s, "tb-")
	if err != nil || !built {
		t.Fatalf("without a cache: built %v, %v", built, err)
	}
	runs(t, bin, "hello")
	cleanup()
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s: %v", filepath.Dir(bin), err)
	}

	s.root = filepath.Join(t.TempDir(), "cache")
	write(t, s.dir, "main.go", "package main\n\nfunc main() { undefined() }\n")
	if _, _, _, err := build(s, "tb-"); !errors.Is(err, errCompile) || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("sources that do not compile: %v", err)
	}
	for _, d := range readDir(t, s.root) {
		if d != ".lock" {
			t.Errorf("a failed build left %s in the cache", d)
		}
	}
}

// TestBuildInterlink: Build gives a runnable interlink; a second Build,
// sources unchanged, takes the cached one.
func TestBuildInterlink(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the interlink binary")
	}
	for i := 0; i < 2; i++ {
		bin, cleanup, err := Build("testbin-test-")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		cleanup()
		if err != nil || !strings.HasPrefix(string(out), "interlink ") {
			t.Fatalf("%s version: %v, %q", bin, err, out)
		}
	}
}

// readDir lists the names in dir.
func readDir(t *testing.T, dir string) []string {
	t.Helper()
	ds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range ds {
		names = append(names, d.Name())
	}
	return names
}
