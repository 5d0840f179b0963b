package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/vm/cache"
)

// TestLabVMUsage: --kernel on a topology without VM nodes, --modules
// without --kernel: one line, exit 3, nothing built.
func TestLabVMUsage(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up", "jumbo", "--kernel", "/boot/vmlinuz"}, "interlink: lab up: --kernel: lab jumbo: no VM node (vm:) to boot kernel /boot/vmlinuz\n"},
		{[]string{"up", "vmjumbo", "--modules", "/lib/modules/x"}, "interlink: lab up: --modules goes with --kernel\n"},
	} {
		code, stdout, stderr := runLab(t, c.args...)
		if code != ExitUnknown || stdout != "" || stderr != c.want {
			t.Errorf("lab %v: exit %d, stdout %q, stderr %q; want exit 3 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestLabCacheClear: the cache directory goes, and the command says which;
// a cache others can write is refused in one line that names the directory
// at fault, and left alone.
func TestLabCacheClear(t *testing.T) {
	base, err := os.MkdirTemp("/run", "interlink-cli-cache-")
	if err != nil || cache.Trusted(base) != nil {
		t.Skipf("no directory root's alone for the cache here (%v)", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "vm")
	t.Setenv("INTERLINK_VM_CACHE", dir)
	os.MkdirAll(filepath.Join(dir, "kernel", "k"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernel", "k", "vmlinuz"), []byte("k"), 0o644)
	code, stdout, stderr := runLab(t, "cache", "clear")
	if code != 0 || stdout != "lab cache: "+dir+" cleared\n" || stderr != "" {
		t.Errorf("lab cache clear: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cache still there: %v", err)
	}
	if code, _, stderr := runLab(t, "cache", "clear", "extra"); code != ExitUnknown || !strings.HasPrefix(stderr, "interlink: ") {
		t.Errorf("lab cache clear extra: exit %d, %q", code, stderr)
	}
	open := filepath.Join(t.TempDir(), "vm")
	os.MkdirAll(filepath.Join(open, "kernel"), 0o755)
	t.Setenv("INTERLINK_VM_CACHE", open)
	code, stdout, stderr = runLab(t, "cache", "clear")
	if code != ExitUnknown || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, os.TempDir()+" is writable by others") {
		t.Errorf("lab cache clear of a cache under /tmp: exit %d, stdout %q, stderr %q; want exit 3 and one line naming %s", code, stdout, stderr, os.TempDir())
	}
	if _, err := os.Stat(filepath.Join(open, "kernel")); err != nil {
		t.Errorf("the untrusted cache was touched: %v", err)
	}
}
