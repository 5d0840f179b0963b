package rules

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListRules keeps the rule tables of the documentation complete:
// every NET-, KERNEL-, CPU- and VM- rule has a row on the check page, every DNFS- rule
// (and, in nfs_test.go, every NFS- rule) one in the NFS guide.
func TestDocsListRules(t *testing.T) {
	pages := map[string]string{"NET-": "../../docs/check.md", "KERNEL-": "../../docs/check.md", "CPU-": "../../docs/check.md",
		"VM-": "../../docs/check.md", "DNFS-": "../../docs/guides/nfs.md"}
	for prefix, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range All() {
			if !strings.HasPrefix(r.ID, prefix) {
				continue
			}
			n++
			if !strings.Contains(string(b), "| `"+r.ID+"` |") && !strings.Contains(string(b), "| "+r.ID+" |") {
				t.Errorf("%s has no row for %s", page, r.ID)
			}
		}
		if n == 0 {
			t.Errorf("no %s rules: has the naming changed?", prefix)
		}
	}
}
