package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCollectBadPlace: --collect into a directory that does not exist, or
// onto a directory, is one line saying which, exit 3, nothing left behind.
func TestCollectBadPlace(t *testing.T) {
	dir := t.TempDir()
	onto := filepath.Join(dir, "bundle.tar.gz")
	if err := os.Mkdir(onto, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "rac1.tar.gz")
	for path, want := range map[string]string{
		onto:    onto + ": is a directory, not a file to write",
		missing: missing + ": directory " + filepath.Dir(missing) + ": no such file or directory",
	} {
		code, _, stderr := runMain(t, "check", "--root", fixtures+"ol8-rac-bond-jumbo", "--collect", path)
		if code != ExitUnknown || stderr != "interlink: check: --collect "+want+"\n" {
			t.Errorf("--collect %s: exit %d, stderr %q", path, code, stderr)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if ents, _ := os.ReadDir(onto); len(ents) != 0 {
		t.Errorf("left in %s: %v", onto, ents)
	}
}
