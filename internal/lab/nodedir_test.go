package lab

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeDirs: a node's files go under LAB.d/nodes, so a node may take
// the name of one of the lab's own files (known_hosts, id_ed25519,
// agent.token has a dot no node name has); a lab brought up before nodes/
// is found where its state says.
func TestNodeDirs(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	own := []string{SSHKnownHostsFile("x"), SSHIdentityFile("x"), SSHIdentityFile("x") + ".pub", AgentTokenFile("x"),
		passwordFile("x"), galeraPasswordFile("x")}
	for _, f := range own {
		node := filepath.Base(f)
		if err := validName(node); err != nil && !strings.Contains(node, ".") {
			t.Fatalf("%s cannot name a node: %v", node, err)
		}
		d := nodeDir("x", node)
		if d == f || strings.HasPrefix(f, d+"/") || filepath.Dir(filepath.Dir(d)) != labDir("x") {
			t.Errorf("node %s: directory %s, lab file %s", node, d, f)
		}
		if s := serviceDir("x", node, KindAgent); !within(s, d) {
			t.Errorf("node %s: service directory %s outside %s", node, s, d)
		}
	}
	old := filepath.Join(labDir("x"), "n1")
	st := &state{Name: "x", VMs: []vmState{{Node: "n1", Dir: old}}}
	if got := st.vmDir("n1"); got != old {
		t.Errorf("recorded VM dir: %s, want %s", got, old)
	}
	if got, want := st.vmDir("n2"), filepath.Join(labDir("x"), "nodes", "n2"); got != want {
		t.Errorf("unrecorded VM dir: %s, want %s", got, want)
	}
}
