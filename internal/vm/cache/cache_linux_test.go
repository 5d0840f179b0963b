package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFillCache: a directory already there is not built again; a failed
// build leaves neither the directory nor its fetch- directory; a good one
// is moved into place whole, over a damaged earlier copy, and what a
// killed fill left is removed.
func TestFillCache(t *testing.T) {
	cache := filepath.Join(trustedDir(t), "cache")
	t.Setenv("INTERLINK_VM_CACHE", cache)
	dir := filepath.Join(cache, "kernel", "pkg")
	ready := func() bool { _, err := os.Stat(filepath.Join(dir, "done")); return err == nil }
	leftovers := func() []string { m, _ := filepath.Glob(filepath.Join(cache, "fetch-*")); return m }

	boom := errors.New("boom")
	err := fillCache(dir, ready, func(tmp string) (string, error) {
		os.WriteFile(filepath.Join(tmp, "part"), []byte("x"), 0o644)
		return "", boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed build: %v, want boom", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) || len(leftovers()) > 0 {
		t.Fatalf("failed build left %v (dir: %v)", leftovers(), err)
	}

	os.MkdirAll(dir, 0o755) // a damaged copy: no "done"
	os.MkdirAll(filepath.Join(cache, "fetch-killed"), 0o755)
	builds := 0
	build := func(tmp string) (string, error) {
		builds++
		if got := leftovers(); len(got) != 1 || got[0] != tmp {
			t.Errorf("while building in %s the cache holds %v: a killed fill's directory stays", tmp, got)
		}
		out := filepath.Join(tmp, "out")
		os.MkdirAll(out, 0o755)
		return out, os.WriteFile(filepath.Join(out, "done"), []byte("1"), 0o644)
	}
	if err := fillCache(dir, ready, build); err != nil {
		t.Fatal(err)
	}
	if !ready() || len(leftovers()) > 0 {
		t.Fatalf("after a good build: ready %v, left %v", ready(), leftovers())
	}
	if err := fillCache(dir, ready, build); err != nil || builds != 1 {
		t.Errorf("a filled directory: %v, built %d times, want once", err, builds)
	}
}
