package replica_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/lab/topology"
	"github.com/interlink/interlink/internal/replica"
)

const fixture = "../../testdata/nodes/ol8-rac-bond-jumbo" // rac1: eth0 public, bond1 (eth1, eth2) interconnect and storage

// node2 makes rac1's tree another node's: its own addresses and name.
var node2 = map[string]string{"10.0.1.11": "10.0.1.12", "10.0.1.21": "10.0.1.22", "192.168.10.11": "192.168.10.12",
	"169.254.12.45": "169.254.12.46", "rac1": "rac2"}

// bundle copies the fixture tree with each file's text replaced as repl
// says (and paths renamed as rename says), gathers it as check would and
// writes the bundle check --collect writes, to dir/name.tar.gz.
func bundle(t *testing.T, dir, name string, repl, rename map[string]string) string {
	t.Helper()
	tree := t.TempDir()
	err := filepath.WalkDir(fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, p)
		for from, to := range rename {
			rel = strings.ReplaceAll(rel, from, to)
		}
		dst := filepath.Join(tree, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			for from, to := range rename {
				target = strings.ReplaceAll(target, from, to)
			}
			return os.Symlink(target, dst)
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		for from, to := range repl {
			s = strings.ReplaceAll(s, from, to)
		}
		return os.WriteFile(dst, []byte(s), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	src, err := inventory.Open(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := inventory.Gather(context.Background(), src, inventory.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".tar.gz")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Collect(f, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func build(t *testing.T, run string) (*replica.Replica, error) {
	t.Helper()
	r, err := replica.Load(context.Background(), run)
	if err != nil {
		return nil, err
	}
	return replica.Build(r, replica.Options{Name: "t24-unit"})
}

// A directory of two check bundles, no mesh: a replica whose nodes keep
// their names (the bundles'), addresses, MTUs and routes, whose bond is
// one link said so in the file, with a filer for the NFS server they
// mount, and the note that paths were not measured.
func TestBundlesWithoutMesh(t *testing.T) {
	dir := t.TempDir()
	bundle(t, dir, "rac1", nil, nil)
	bundle(t, dir, "rac2", node2, nil)
	r, err := build(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Measured || !has(r.Limits, "paths were not measured") {
		t.Errorf("measured %v, limits %q: want the note that paths were not measured", r.Measured, r.Limits)
	}
	var yml bytes.Buffer
	if err := r.WriteYAML(&yml); err != nil {
		t.Fatal(err)
	}
	back, err := topology.Parse("replica.yaml", yml.Bytes())
	if err != nil {
		t.Fatalf("the file does not read back: %v\n%s", err, yml.String())
	}
	want := map[string]map[string]string{ // node -> link -> "switch mtu addresses"
		"rac1": {"eth0": "pub 1500 10.0.1.11/24 10.0.1.21/24", "bond1": "ic 9000 192.168.10.11/24"},
		"rac2": {"eth0": "pub 1500 10.0.1.12/24 10.0.1.22/24", "bond1": "ic 9000 192.168.10.12/24"},
	}
	for _, n := range back.Nodes[:2] {
		for _, l := range n.Links {
			var as []string
			for _, a := range l.Addresses {
				as = append(as, a.String())
			}
			got := l.Switch + " " + itoa(l.MTU) + " " + strings.Join(as, " ")
			if want[n.Name][l.Name] != got {
				t.Errorf("%s %s: %q, want %q", n.Name, l.Name, got, want[n.Name][l.Name])
			}
			if l.PortMTU != l.MTU {
				t.Errorf("%s %s: port MTU %d without a measured blackhole", n.Name, l.Name, l.PortMTU)
			}
		}
		if len(n.Routes) != 1 || n.Routes[0].To.Bits() != 0 || n.Routes[0].Via.String() != "10.0.1.1" {
			t.Errorf("%s routes %v, want the default route via 10.0.1.1", n.Name, n.Routes)
		}
		if n.Service(topology.KindAgent) == nil {
			t.Errorf("%s runs no agent", n.Name)
		}
	}
	filers := map[string]string{}
	for _, n := range back.Nodes[2:] {
		if n.Service(topology.KindNFS) != nil && len(n.Links) == 1 {
			filers[n.Name] = n.Links[0].Addresses[0].String()
		}
	}
	if len(back.Nodes) != 4 || filers["nas01"] != "192.168.10.21/24" || filers["nas02"] != "192.168.10.22/24" {
		t.Errorf("want filers nas01 and nas02 at the mounts' addr= with an NFS service each, got %v of %d nodes", filers, len(back.Nodes))
	}
	for _, s := range []string{"# cluster node rac1, bundle", "a bond in the cluster (active-backup, slaves eth1 eth2)", "Paths were not measured", "kernel versions"} {
		if !strings.Contains(yml.String(), s) {
			t.Errorf("the file lacks %q:\n%s", s, yml.String())
		}
	}
	if !has(r.Notes, "169.254.12.45/19 left out: link-local") {
		t.Errorf("notes %q: want the HAIP address left out", r.Notes)
	}
	if r.Nodes[0].Interconnect == nil || r.Nodes[0].Interconnect[0] != "bond1" {
		t.Errorf("interconnect %v, want bond1 (the GPnP profile's)", r.Nodes[0].Interconnect)
	}
}

// Bad input is one line naming what is wrong, ErrInput, nothing built.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := bundle(t, dir, "rac1", nil, nil)
	cases := map[string]struct {
		setup func(d string) string
		want  string
	}{
		"another schema": {func(d string) string {
			return write(t, filepath.Join(d, "mesh.json"), `{"schema": "interlink.mesh/v1", "nodes": []}`)
		}, "is interlink.mesh/v1, not a cluster run"},
		"another version": {func(d string) string {
			return write(t, filepath.Join(d, "run.json"), `{"schema": "interlink.cluster/v2", "nodes": []}`)
		}, "is interlink.cluster/v2, a version this interlink does not read"},
		"not JSON": {func(d string) string { return write(t, filepath.Join(d, "run.json"), "nodes: []") }, "is not JSON"},
		"two nodes claim one address": {func(d string) string {
			link(t, good, filepath.Join(d, "rac1.tar.gz"))
			link(t, good, filepath.Join(d, "rac9.tar.gz"))
			return d
		}, "rac1 (bond1) and rac9 (bond1) both claim 192.168.10.11"},
		"hostile bundle name": {func(d string) string {
			link(t, good, filepath.Join(d, "rac1;id.tar.gz"))
			return d
		}, `node name "rac1;id": a node name holds letters, digits`},
		"hostile interface name": {func(d string) string {
			bundle(t, d, "rac1", map[string]string{"eth0": "e$(id)"}, map[string]string{"eth0": "e$(id)"})
			return d
		}, `interface "e$(id)": use letters, digits`},
		"hostile name in a cluster run": {func(d string) string {
			return write(t, filepath.Join(d, "run.json"), `{"schema": "interlink.cluster/v1", "nodes": [{"name": "rac1\u001b[31m"}]}`)
		}, `node name "rac1\x1b[31m"`},
		"more nodes than a lab builds": {func(d string) string {
			return write(t, filepath.Join(d, "run.json"), manyNodes(replica.MaxNodes+1))
		}, "RUN has 1025 nodes; a lab builds at most 1024"},
		"nothing to build from": {func(d string) string { return d }, "holds no cluster run"},
		// A run cut short, named or found in its directory, says so (it
		// was "holds no cluster run and no bundles").
		"truncated run": {func(d string) string {
			return write(t, filepath.Join(d, "cluster.json"), `{"schema": "interlink.cluster/v1", "nodes": [{"name": "ra`)
		}, "cluster.json is not JSON (unexpected end of JSON input: truncated after 57 bytes)"},
		"truncated run in its directory": {func(d string) string {
			write(t, filepath.Join(d, "cluster.json"), `{"schema": "interlink.cluster/v1", "nodes": [{"name": "ra`)
			return d
		}, "holds no readable cluster run: cluster.json: unexpected end of JSON input: truncated after 57 bytes"},
		"foreign JSON in a directory": {func(d string) string {
			write(t, filepath.Join(d, "package.json"), `{"name": "left-pad"}`)
			write(t, filepath.Join(d, "mesh.json"), `{"schema": "interlink.mesh/v1"}`)
			return d
		}, "holds no cluster run (the JSON of interlink cluster --json) and no check --collect bundles"},
		"empty file": {func(d string) string { return write(t, filepath.Join(d, "run.json"), "") }, "run.json is not JSON (unexpected end of JSON input: truncated after 0 bytes)"},
		// A run is decoded once, as a cluster run; what does not decode is
		// still named for what it is.
		"cluster run that does not decode": {func(d string) string {
			return write(t, filepath.Join(d, "run.json"), `{"schema": "interlink.cluster/v1", "nodes": "rac1"}`)
		}, "run.json: json: cannot unmarshal string into Go struct field"},
		"cluster run that does not decode, in its directory": {func(d string) string {
			write(t, filepath.Join(d, "run.json"), `{"schema": "interlink.cluster/v1", "nodes": "rac1"}`)
			return d
		}, "run.json: json: cannot unmarshal string into Go struct field"},
		"another schema that does not decode as a run": {func(d string) string {
			return write(t, filepath.Join(d, "mesh.json"), `{"schema": "interlink.mesh/v1", "nodes": "rac1"}`)
		}, "is interlink.mesh/v1, not a cluster run"},
		"schema not a string": {func(d string) string { return write(t, filepath.Join(d, "run.json"), `{"schema": 1}`) }, "run.json has no schema"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := build(t, c.setup(t.TempDir()))
			if !errors.Is(err, replica.ErrInput) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line with %q (ErrInput)", err, c.want)
			}
		})
	}
}

func manyNodes(n int) string {
	var b strings.Builder
	b.WriteString(`{"schema": "interlink.cluster/v1", "nodes": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name": "n` + itoa(i) + `", "status": "ok", "check": {"schema": "interlink.check/v1", "inventory": {"interfaces": [` +
			`{"name": "eth1", "type": "physical", "mtu": 9000, "operstate": "up", "addresses": ["10.1.` + itoa(i/250) + "." + itoa(i%250+1) + `/16"]}]}}}`)
	}
	b.WriteString("]}")
	return b.String()
}

func write(t *testing.T, p, s string) string {
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func link(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}

func has(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }
