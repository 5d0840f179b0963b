package kernel

import (
	"os"
	"path/filepath"
	"testing"
)

// TestThreadSelf holds the one thread-self probe against procfs roots
// that have it (a link, as on 3.17 and later), lack it (3.10), and cannot
// be asked (the root is a file, so the lookup fails with ENOTDIR, not
// "does not exist"): present, absent, unknown.
func TestThreadSelf(t *testing.T) {
	dir := t.TempDir()
	with := filepath.Join(dir, "with")
	without := filepath.Join(dir, "without")
	for _, d := range []string{with, without} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A dangling link still counts: the kernel's link names a task
	// directory, which Lstat need not follow.
	if err := os.Symlink("self/task/1", filepath.Join(with, "thread-self")); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root           string
		present, known bool
	}{
		{with, true, true},
		{without, false, true},
		{notDir, false, false},
	} {
		present, known := ThreadSelf(c.root)
		if present != c.present || known != c.known {
			t.Errorf("ThreadSelf(%s) = %v, %v; want %v, %v", filepath.Base(c.root), present, known, c.present, c.known)
		}
	}
}
