package rules

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/inventory"
)

// fixtureDir is where the captured node trees live.
const fixtureDir = "../../testdata/nodes"

// loadNode gathers the inventory of one fixture tree and the Config its
// roles.txt (PATH=ROLE lines) and platform.txt (one word) describe.
func loadNode(t testing.TB, name string) (*inventory.Inventory, *Config) {
	t.Helper()
	root := filepath.Join(fixtureDir, name)
	inv := gatherDir(t, root)
	cfg := &Config{Platform: Linux, MountRoles: map[string]Role{}}
	if b, err := os.ReadFile(filepath.Join(root, "platform.txt")); err == nil {
		p, err := ParsePlatform(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Platform = p
	}
	if f, err := os.Open(filepath.Join(root, "roles.txt")); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			line := strings.TrimSpace(s.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p, r, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s/roles.txt: bad line %q", name, line)
			}
			role, err := ParseRole(r)
			if err != nil {
				t.Fatal(err)
			}
			cfg.MountRoles[p] = role
		}
	}
	return inv, cfg
}

// gatherDir gathers the inventory of the node tree at dir.
func gatherDir(t testing.TB, dir string) *inventory.Inventory {
	t.Helper()
	src, err := inventory.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Gather(context.Background(), src, inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// nfsFindings evaluates all rules and keeps the NFS ones.
func nfsFindings(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, f := range Evaluate(inv, cfg) {
		if strings.HasPrefix(f.Rule, "NFS-") {
			out = append(out, f)
		}
	}
	return out
}
