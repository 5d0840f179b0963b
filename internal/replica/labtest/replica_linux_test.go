//go:build linux

package labtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/replica"
	"github.com/interlink/interlink/internal/rules"
)

// original is the cluster the run measures, written as an operator's site
// would be (its names are not what a replica makes): three nodes reached
// over the public network; interconnect network 1 on one 9000 switch where
// node 2's port was left at 1500 (a blackhole); network 2 routed through a
// gateway whose interface toward node 3 is at 1400 (an ICMP hop; node 3's
// own interface there is 8000). The link names hold dots like VLANs.
const original = `name: t24-site
switches:
  public: {mtu: 1500}
  priv: {mtu: 9000}
  priva: {mtu: 9000}
  privb: {mtu: 9000}
nodes:
  ops:
    links:
      - {name: eth0, switch: public, addresses: [198.18.0.100/24]}
  n1:
    links:
      - {name: eth0, switch: public, addresses: [198.18.0.1/24]}
      - {name: eth1, switch: priv, addresses: [198.18.10.1/24, fd00:10::1/64]}
      - {name: eth2.20, switch: priva, addresses: [198.18.20.1/24]}
    routes:
      - {to: 198.18.21.0/24, via: 198.18.20.254}
  n2:
    links:
      - {name: eth0, switch: public, addresses: [198.18.0.2/24]}
      - {name: eth1, switch: priv, addresses: [198.18.10.2/24, fd00:10::2/64], port_mtu: 1500}
      - {name: eth2.20, switch: priva, addresses: [198.18.20.2/24]}
    routes:
      - {to: 198.18.21.0/24, via: 198.18.20.254}
  n3:
    links:
      - {name: eth0, switch: public, addresses: [198.18.0.3/24]}
      - {name: eth1, switch: priv, addresses: [198.18.10.3/24, fd00:10::3/64]}
      - {name: eth2.21, switch: privb, addresses: [198.18.21.3/24], mtu: 8000}
    routes:
      - {to: 198.18.20.0/24, via: 198.18.21.254}
  gw:
    forward: true
    links:
      - {name: eth0, switch: priva, addresses: [198.18.20.254/24]}
      - {name: eth1, switch: privb, addresses: [198.18.21.254/24], mtu: 1400}
`

// The cluster's names, as the inventory gives them.
var names = []string{"Rac1.lab.example", "Rac2.lab.example", "Rac3.lab.example"}

type cell struct {
	net      int
	from, to string
}

func matrix(ps []mesh.Path) map[cell]string {
	m := map[cell]string{}
	for _, p := range ps {
		m[cell{p.Network, p.From, p.To}] = fmt.Sprintf("%s %d", p.Verdict, p.PathMTU)
	}
	return m
}

// A cluster run over the site, then its replica: the replica's own mesh
// gives the run's matrix and verdicts (interlink diff says no change),
// names, addresses and MTUs survive, and check in each replica node gives
// the interconnect findings of the node's bundle.
func TestReplicaOfClusterRun(t *testing.T) {
	topo, err := lab.Parse("t24-site.yaml", []byte(original))
	if err != nil {
		t.Fatal(err)
	}
	site := labuptest.Up(t, topo)
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	mkdir(t, runDir)
	client := labuptest.NewKey(t)
	var kh, inv strings.Builder
	inv.WriteString("nodes:\n")
	for i := 1; i <= 3; i++ {
		hk := labuptest.NewKey(t)
		labuptest.SSHD(t, labuptest.Node(t, site, fmt.Sprintf("n%d", i)), fmt.Sprintf("198.18.0.%d", i), hk, client)
		fmt.Fprintf(&kh, "198.18.0.%d %s\n", i, hk.Authorized())
		net2 := "198.18.20." + fmt.Sprint(i)
		if i == 3 {
			net2 = "198.18.21.3"
		}
		fmt.Fprintf(&inv, "  - {name: %s, host: 198.18.0.%d, user: root, interconnect: [198.18.10.%d, %s]}\n", names[i-1], i, i, net2)
	}
	id := write(t, filepath.Join(dir, "id"), string(client.Private), 0o600)
	out, _, code := runIn(t, labuptest.Node(t, site, "ops"), "cluster", "--inventory", write(t, filepath.Join(dir, "inventory.yaml"), inv.String(), 0o644),
		"--ssh-config", "none", "--known-hosts", write(t, filepath.Join(dir, "known_hosts"), kh.String(), 0o644),
		"--identity", id, "--collect", runDir, "--json")
	runJSON := write(t, filepath.Join(runDir, "cluster.json"), out, 0o644)
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Mesh == nil {
		t.Fatalf("cluster --json (exit %d): %v, mesh %v", code, err, res.Mesh != nil)
	}
	measured := matrix(res.Mesh.Paths)
	for _, c := range []struct {
		cell
		want string
	}{
		{cell{1, names[0], names[2]}, "ok 9000"}, {cell{1, names[0], names[1]}, "blackhole 1500"}, {cell{1, names[1], names[2]}, "blackhole 1500"},
		{cell{2, names[0], names[1]}, "ok 9000"}, {cell{2, names[0], names[2]}, "icmp 1400"}, {cell{2, names[2], names[0]}, "blackhole 1400"},
	} {
		if measured[c.cell] != c.want {
			t.Fatalf("the site's own mesh: network %d %s -> %s is %q, want %q (the test's site is not what it says)", c.net, c.from, c.to, measured[c.cell], c.want)
		}
	}

	// The replica, built by the CLI as a user would.
	const name = "t24-rep"
	downAfter(t, name)
	yml, nodes := filepath.Join(dir, "replica.yaml"), filepath.Join(dir, "replica.nodes")
	text, _, code := run(t, "lab", "replica", runJSON, "--write", yml, "--nodes", nodes, "--name", name, "--up")
	if code != 0 {
		t.Fatalf("lab replica: exit %d", code)
	}
	for _, s := range []string{"measured paths the replica gives alike: 12 of 12", "cannot reproduce:", "link speed", "kernel versions", "port MTU 1500"} {
		if !strings.Contains(text, s) {
			t.Errorf("lab replica's summary lacks %q", s)
		}
	}
	rep, err := lab.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	meshOut, _, _ := run(t, "lab", "exec", name, "rac1", "--", bin, "mesh", "--nodes", nodes, "--token-file", lab.AgentTokenFile(name), "--json")
	meshFile := write(t, filepath.Join(dir, "replica-mesh.json"), meshOut, 0o644)
	var rm mesh.Result
	if err := json.Unmarshal([]byte(meshOut), &rm); err != nil {
		t.Fatalf("replica mesh --json: %v", err)
	}
	got := matrix(rm.Paths)
	if len(got) != 12 || len(measured) != 12 {
		t.Errorf("replica %d paths, run %d, want 12 each", len(got), len(measured))
	}
	for k, w := range measured {
		if got[k] != w {
			t.Errorf("network %d %s -> %s: run %q, replica %q", k.net, k.from, k.to, w, got[k])
		}
	}
	if diff, _, code := run(t, "diff", runJSON, meshFile); code != 0 || !strings.Contains(diff, "no change") {
		t.Errorf("interlink diff RUN replica-mesh: exit %d, want 0 and no change", code)
	}

	// Names, addresses and MTUs survive.
	made, err := lab.Load(yml)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		want := nodeSpec(topo, fmt.Sprintf("n%d", i))
		have := nodeSpec(made, fmt.Sprintf("rac%d", i))
		if have == nil {
			t.Fatalf("replica has no node rac%d", i)
		}
		for _, wl := range want.Links {
			hl := linkSpec(have, wl.Name)
			if hl == nil || hl.MTU != wl.MTU || !slices.Equal(hl.Addresses, wl.Addresses) {
				t.Errorf("rac%d %s: %+v, want MTU %d addresses %v", i, wl.Name, hl, wl.MTU, wl.Addresses)
			}
		}
		if len(have.Routes) != len(want.Routes) || len(have.Routes) > 0 && have.Routes[0] != want.Routes[0] {
			t.Errorf("rac%d routes %v, want %v", i, have.Routes, want.Routes)
		}
	}

	// check in each replica node gives its bundle's interconnect findings.
	for i, n := range names {
		ic := "eth1,eth2.20"
		if i == 2 {
			ic = "eth1,eth2.21"
		}
		bundle := filepath.Join(runDir, n+".tar.gz")
		b, _, _ := run(t, "check", "--root", bundle, "--interconnect", ic, "--json")
		r, _, _ := runIn(t, labuptest.Node(t, rep, fmt.Sprintf("rac%d", i+1)), "check", "--interconnect", ic, "--json")
		var br, rr rules.Result
		if json.Unmarshal([]byte(b), &br) != nil || json.Unmarshal([]byte(r), &rr) != nil {
			t.Fatalf("%s: check --json did not parse", n)
		}
		bf, rf := replica.InterconnectFindings(&br), replica.InterconnectFindings(&rr)
		if !slices.Equal(bf, rf) {
			t.Errorf("%s: bundle %v, replica %v", n, bf, rf)
		}
		if i == 2 && len(bf) == 0 {
			t.Errorf("%s: no interconnect finding on the bundle (eth2.21 is at 8000): the comparison proves little", n)
		}
	}
}

func nodeSpec(t *lab.Topology, name string) *lab.NodeSpec {
	for i := range t.Nodes {
		if t.Nodes[i].Name == name {
			return &t.Nodes[i]
		}
	}
	return nil
}

func linkSpec(n *lab.NodeSpec, name string) *lab.LinkSpec {
	for i := range n.Links {
		if n.Links[i].Name == name {
			return &n.Links[i]
		}
	}
	return nil
}

func mkdir(t *testing.T, d string) {
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
}
