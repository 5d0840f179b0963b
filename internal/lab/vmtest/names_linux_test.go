//go:build linux

package vmtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// TestVMNodeNamedLikeLabFiles: a VM node named known_hosts, whose sshd
// makes the lab write its own known_hosts file, and a namespace node named
// id_ed25519, whose agent has a directory, come up whole: a node's files
// are under LAB.d/nodes, apart from the lab's own files in LAB.d.
func TestVMNodeNamedLikeLabFiles(t *testing.T) {
	need(t)
	name := labName(t, "vmn")
	topo, err := lab.Parse(name+".yaml", []byte(fmt.Sprintf(`name: %s
switches: {ic: {mtu: 9000}}
nodes:
  known_hosts:
    vm: {}
    links: [{switch: ic, address: 198.18.10.1/24}]
    services: [{kind: sshd}]
  id_ed25519:
    links: [{switch: ic, address: 198.18.10.2/24}]
    services: [{kind: agent}]
`, name)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	l, err := lab.Up(ctx, topo, lab.WithBinary(binary))
	if err != nil {
		t.Fatal(err)
	}
	step(t, "lab up", start)
	st, err := lab.Inspect(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != lab.StateUp || len(st.Problems) > 0 {
		t.Errorf("lab %s, problems %q", st.State, st.Problems)
	}
	for _, n := range st.Nodes {
		for _, s := range n.Services {
			if s.State != lab.ServiceRunning {
				t.Errorf("node %s: %s %s (%s)", n.Name, s.Kind, s.State, s.Reason)
			}
		}
	}
	n, err := l.Node("known_hosts")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if code, err := n.Exec(ctx, []string{"cat", "/etc/hostname"}, &out, &errb); err != nil || code != 0 || out.String() != "known_hosts\n" {
		t.Errorf("exec in known_hosts: %d %v, stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
	hosts, err := os.ReadFile(lab.SSHKnownHostsFile(name))
	if err != nil || !strings.HasPrefix(string(hosts), "198.18.10.1 ssh-ed25519 ") {
		t.Errorf("the lab's known_hosts file: %v, %q", err, hosts)
	}
	if st.Nodes[0].VM == nil {
		t.Fatalf("node known_hosts has no VM in lab status: %+v", st.Nodes[0])
	}
	pid := st.Nodes[0].VM.PID
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, name, []int{pid})
}
