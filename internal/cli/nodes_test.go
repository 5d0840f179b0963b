package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
)

// TestNodeLists: mesh and bench --mode gc read their nodes through one
// reader but keep their own words, and gc says it needs 2 nodes before
// mesh.Check would say a mesh does. Every problem is a usage error (exit
// code 3) naming the command.
func TestNodeLists(t *testing.T) {
	const dir = "testdata/nodes/"
	var many []string
	for i := 0; i <= gc.MaxNodes; i++ {
		many = append(many, fmt.Sprintf("n%d=127.0.0.1:%d", i, 7400+i))
	}
	// Past mesh.MaxNodes, or past mesh.MaxPaths with several networks,
	// a mesh is refused before any work (1000 nodes took 1.6 GB, 3000
	// never finished).
	var tooMany, tooManyPaths []string
	for i := 0; i <= mesh.MaxNodes; i++ {
		tooMany = append(tooMany, fmt.Sprintf("n%d=127.0.0.1", i))
	}
	for i := 0; i < 200; i++ {
		tooManyPaths = append(tooManyPaths, fmt.Sprintf("n%d=127.0.0.1@10.0.%d.1,10.1.%d.1,10.2.%d.1,10.3.%d.1", i, i, i, i, i))
	}
	cases := []struct {
		cmd  string
		file string
		args []string
		want string // "": no error
	}{
		{"mesh", dir + "two.txt", nil, ""},
		{"bench", dir + "two.txt", nil, ""},
		{"mesh", "", []string{"127.0.0.1", "127.0.0.2"}, ""},
		{"bench", "", []string{"127.0.0.1", "127.0.0.2"}, ""},
		{"mesh", dir + "two.txt", []string{"127.0.0.1"}, "mesh: give nodes either with --nodes or as arguments, not both"},
		{"bench", dir + "two.txt", []string{"127.0.0.1"}, "bench: give the nodes either with --nodes or as arguments, not both"},
		{"mesh", dir + "absent.txt", nil, "mesh: --nodes: stat testdata/nodes/absent.txt: no such file or directory"},
		{"bench", dir + "absent.txt", nil, "bench: --nodes: stat testdata/nodes/absent.txt: no such file or directory"},
		{"mesh", dir + "bad.txt", nil, `mesh: testdata/nodes/bad.txt:1: want NAME AGENT[:PORT] [ADDR ...], got "rac1"`},
		{"bench", dir + "one.txt", nil, "bench: a mesh needs at least 2 nodes, got 1"},
		{"mesh", "", []string{"127.0.0.1"}, "mesh: a mesh needs at least 2 nodes, got 1"},
		{"bench", "", []string{"127.0.0.1"}, "bench: --mode gc needs at least 2 nodes (NODE NODE... or --nodes FILE), got 1"},
		{"bench", "", nil, "bench: --mode gc needs at least 2 nodes (NODE NODE... or --nodes FILE), got 0"},
		{"mesh", "", []string{"a=127.0.0.1", "a=127.0.0.2"}, "mesh: node a listed twice"},
		{"bench", "", []string{"a=127.0.0.1", "a=127.0.0.2"}, "bench: node a listed twice"},
		{"bench", "", many, fmt.Sprintf("bench: %d nodes: --mode gc takes at most %d", gc.MaxNodes+1, gc.MaxNodes)},
		{"mesh", "", many, ""},
		{"mesh", "", []string{"=127.0.0.1", "b=127.0.0.2"}, `mesh: node "=127.0.0.1": empty NAME before '='`},
		{"mesh", "", []string{"a=127.0.0.1@", "b=127.0.0.2"}, `mesh: node "127.0.0.1@": no address after '@'`},
		{"mesh", dir + "binary.txt", nil, `mesh: testdata/nodes/binary.txt:1: node \e[31mred\x07: "\x1b[0m" is not an IP address`},
		{"mesh", "", tooMany, fmt.Sprintf("mesh: %d nodes: a mesh takes at most %d (split the cluster)", mesh.MaxNodes+1, mesh.MaxNodes)},
		{"mesh", "", tooManyPaths, fmt.Sprintf("mesh: 200 nodes on 4 networks make 159200 paths: a mesh proves at most %d (%d nodes on 2 networks)", mesh.MaxPaths, mesh.MaxNodes)},
	}
	for _, c := range cases {
		read := meshNodes
		if c.cmd == "bench" {
			read = gcNodes
		}
		nodes, err := read(c.file, c.args)
		name := fmt.Sprintf("%s %q %q", c.cmd, c.file, c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want == "" && len(nodes) < 2:
			t.Errorf("%s: nodes %v", name, nodes)
		case c.want != "" && err == nil:
			t.Errorf("%s: nodes %v, want %q", name, nodes, c.want)
		case c.want != "" && (err.Error() != c.want || !errors.Is(err, ErrUsage) || exitCode(err) != 3 || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %q (exit code %d), want %q, exit code 3", name, err, exitCode(err), c.want)
		}
	}
	nodes, err := meshNodes(dir+"two.txt", nil)
	if err != nil || nodes[0].Name != "rac1" || nodes[0].Agent != "127.0.0.1:7400" || len(nodes[0].Addrs) != 1 || nodes[1].Name != "rac2" {
		t.Errorf("two.txt: %+v, %v", nodes, err)
	}
}
