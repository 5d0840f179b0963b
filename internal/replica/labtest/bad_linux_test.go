//go:build linux

package labtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/lab"
)

// node is a cluster run's node whose inventory has one interface.
func node(name, iface, addr string) string {
	return fmt.Sprintf(`{"name": %q, "status": "ok", "check": {"schema": "interlink.check/v1", "inventory": {"interfaces": [`+
		`{"name": %q, "type": "physical", "mtu": 9000, "operstate": "up", "addresses": [%q]}]}}}`, name, iface, addr)
}

func runDoc(nodes ...string) string {
	return `{"schema": "interlink.cluster/v1", "nodes": [` + strings.Join(nodes, ",") + `]}`
}

// Bad input to lab replica --up: one line on stderr, exit 3, and nothing
// made: no topology file, no nodes file, no lab.
func TestBadRunCreatesNothing(t *testing.T) {
	many := make([]string, 1025)
	for i := range many {
		many[i] = node(fmt.Sprintf("n%d", i), "eth1", fmt.Sprintf("10.1.%d.%d/16", i/250, i%250+1))
	}
	cases := map[string]struct{ doc, want string }{
		"another schema":        {`{"schema": "interlink.mesh/v1", "nodes": []}`, "is interlink.mesh/v1, not a cluster run"},
		"another version":       {`{"schema": "interlink.cluster/v2", "nodes": []}`, "a version this interlink does not read"},
		"two nodes one address": {runDoc(node("rac1", "eth1", "10.1.0.1/24"), node("rac2", "eth1", "10.1.0.1/24")), "rac1 (eth1) and rac2 (eth1) both claim 10.1.0.1"},
		"more nodes than a lab": {runDoc(many...), "RUN has 1025 nodes; a lab builds at most 1024"},
		"hostile node name":     {runDoc(node("rac1$(id)", "eth1", "10.1.0.1/24")), `node name "rac1$(id)"`},
		"hostile interface":     {runDoc(node("rac1", "eth1;reboot", "10.1.0.1/24"), node("rac2", "eth1", "10.1.0.2/24")), `interface "eth1;reboot"`},
	}
	before := labDirs(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := write(t, filepath.Join(dir, "run.json"), c.doc, 0o644)
			yml, nodes := filepath.Join(dir, "replica.yaml"), filepath.Join(dir, "replica.nodes")
			downAfter(t, "t24-bad")
			out, stderr, code := run(t, "lab", "replica", in, "--write", yml, "--nodes", nodes, "--name", "t24-bad", "--up")
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 3 || len(lines) != 1 || !strings.Contains(stderr, c.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 3 and one line with %q", code, out, stderr, c.want)
			}
			for _, f := range []string{yml, nodes} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s written", f)
				}
			}
			if _, err := lab.Inspect("t24-bad"); !errors.Is(err, lab.ErrNotFound) {
				t.Errorf("lab t24-bad: %v, want none", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the run's directory holds %d files, want only run.json", len(ents))
			}
		})
	}
	if after := labDirs(t); !slices.Equal(before, after) {
		t.Errorf("lab state before %v, after %v", before, after)
	}
}
