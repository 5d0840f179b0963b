package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestLabCacheClear: the cache directory goes, and the command says which.
func TestLabCacheClear(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vm")
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
}
