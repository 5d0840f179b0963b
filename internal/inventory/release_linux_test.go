package inventory

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
)

// TestKernelReleaseBounded: a bundle's /proc/sys/kernel/osrelease that
// holds more than a release (megabytes, several lines) is cut to one line
// of at most 64 bytes (utsname's limit) and marked, so check's header and
// its KERNEL-FACILITIES finding stay one short line; a real one is kept.
func TestKernelReleaseBounded(t *testing.T) {
	// One copy of the node for the three releases.
	const node = "../../testdata/nodes/ol8-rac-bond-jumbo"
	root := filepath.Join(t.TempDir(), "node")
	fixturetest.Copy(t, node, root)
	for _, c := range []struct{ file, want string }{
		{"3.10.0-1160.el7.x86_64\n", "3.10.0-1160.el7.x86_64"},
		{"4.14.35-2047.518.4.el7uek.x86_64\nsecond line\n", "4.14.35-2047.518.4.el7uek.x86_64..."},
		{strings.Repeat("5.15.0-", 1<<20), strings.Repeat("5.15.0-", 10)[:64] + "..."},
	} {
		fixturetest.Restore(t, node, root) // the fixture's release again
		fixturetest.Write(t, root, "/proc/sys/kernel/osrelease", c.file)
		inv, err := gatherBounded(t, root)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Node.Kernel != c.want {
			t.Errorf("release %.30q...: got %q, want %q", c.file, inv.Node.Kernel, c.want)
		}
	}
}
