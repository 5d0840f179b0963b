package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabReplicaBadOutput: a --write or --nodes whose directory does not
// exist is one line naming the flag, exit 3, and neither file is written
// (a bad --nodes used to leave the --write file behind).
func TestLabReplicaBadOutput(t *testing.T) {
	dir := t.TempDir()
	bundles := filepath.Join(dir, "run")
	if err := os.Mkdir(bundles, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runMain(t, "check", "--root", fixtures+"ol8-rac-bond-jumbo", "--collect", filepath.Join(bundles, "rac1.tar.gz")); code == ExitUnknown {
		t.Fatalf("check --collect: %s", stderr)
	}
	yml, nodes := filepath.Join(dir, "replica.yaml"), filepath.Join(dir, "replica.nodes")
	missing := filepath.Join(dir, "no", "such")
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--write", yml, "--nodes", missing}, "--nodes " + missing},
		{[]string{"--write", missing, "--nodes", nodes}, "--write " + missing},
		{[]string{"--write", bundles}, "--write " + bundles + ": is a directory"},
		{[]string{"--write", yml, "--name", ""}, "--name is empty"},
	} {
		code, out, stderr := runMain(t, append([]string{"lab", "replica", bundles}, c.args...)...)
		if code != ExitUnknown || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "interlink: lab replica: "+c.flag) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
		if out != "" {
			t.Errorf("%v: stdout %q", c.args, out)
		}
		for _, f := range []string{yml, nodes} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%v: %s written", c.args, f)
			}
		}
	}
}
