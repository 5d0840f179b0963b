//go:build linux

package labtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOldLayout: a lab brought up by an interlink that kept node
// directories in LAB.d/NODE, before LAB.d/nodes, is read and removed by
// what its state records: status finds its agents' logs there, and lab
// down leaves nothing.
func TestOldLayout(t *testing.T) {
	dir := privateDir(t)
	name := prefix + "-oldlayout"
	file := filepath.Join(t.TempDir(), "old.yaml")
	topo := "name: " + name + `
switches: {ic: {mtu: 9000}}
nodes:
  n1: {links: [{switch: ic, address: 198.18.60.1/24}], services: [{kind: agent}]}
  n2: {links: [{switch: ic, address: 198.18.60.2/24}], services: [{kind: agent}]}
`
	if err := os.WriteFile(file, []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "lab", "up", file); r.code != 0 {
		t.Fatalf("lab up: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() { run(t, "lab", "down", name) })
	// What an older interlink left: the node directories beside the lab's
	// files, and its record saying so.
	labDir := filepath.Join(dir, name+".d")
	for _, n := range []string{"n1", "n2"} {
		if err := os.Rename(filepath.Join(labDir, "nodes", n), filepath.Join(labDir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(labDir, "nodes")); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, name+".json")
	data, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(string(data), labDir+"/nodes/", labDir+"/")
	if old == string(data) {
		t.Fatalf("the state records no node directory under %s/nodes:\n%s", labDir, data)
	}
	if err := os.WriteFile(statePath, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "lab", "status", name, "--json")
	var doc labDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab status --json: exit %d, %v: %s%s", r.code, err, r.stdout, r.stderr)
	}
	for _, n := range []string{"n1", "n2"} {
		a := service(t, doc.Labs[0], n, "agent")
		if want := filepath.Join(labDir, n, "agent", "agent.log"); a.State != "running" || a.Log != want {
			t.Errorf("%s's agent: %s, log %s; want running, %s", n, a.State, a.Log, want)
		}
	}
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: %d %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
	if ps := processesUnder(labDir); len(ps) > 0 {
		t.Errorf("processes left after lab down: %v", ps)
	}
}
