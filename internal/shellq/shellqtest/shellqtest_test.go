package shellqtest

import (
	"os"
	"testing"
)

// TestShareDir: under ShareDir, the shells run in one directory of the
// glob files for the test and its subtests, removed when the test ends;
// without it, in a directory of the same files made for the call.
func TestShareDir(t *testing.T) {
	var dir string
	t.Run("shared", func(t *testing.T) {
		ShareDir(t)
		dir = shared.dir
		for _, f := range globFiles {
			if _, err := os.Stat(dir + "/" + f); err != nil {
				t.Fatalf("shared directory: %v", err)
			}
		}
		t.Run("sub", func(t *testing.T) {
			out, err := printWords(t, "bash", "*")
			if err != nil || out != "a\x00b\x00eth1\x00x y\x00" {
				t.Errorf("bash printf * in the shared directory: %q, %v", out, err)
			}
		})
		if shared.dir != dir {
			t.Errorf("shared directory %q changed to %q while the test ran", dir, shared.dir)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) || shared.dir != "" || shared.refs != 0 {
		t.Errorf("after the test: %s: %v, shared %+v", dir, err, shared.dir)
	}
	out, err := printWords(t, "sh", "?")
	if err != nil || out != "a\x00b\x00" {
		t.Errorf("sh printf ? in a directory of its own: %q, %v", out, err)
	}
}
