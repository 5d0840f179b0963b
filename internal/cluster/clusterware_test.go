package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/rules"
)

func checkWith(ifs []inventory.Interface) *rules.Result {
	return &rules.Result{Schema: "interlink.check/v1", Inventory: &inventory.Inventory{Interfaces: ifs}}
}

const nodesTree = "../../testdata/nodes/"

func TestParseCRSConfig(t *testing.T) {
	for _, tc := range []struct {
		file, nodes, nets, vips string
	}{
		{nodesTree + "ol8-rac-bond-jumbo/u01/app/19.0.0/grid/crs/install/crsconfig_params", "rac1,rac2",
			"eth0/10.0.1.0:public bond1/192.168.10.0:asm,cluster_interconnect", "rac1-vip,rac2-vip"},
		{"testdata/clusterware/crsconfig_params-12.1-ipv6", "ora1,ora2,ora3",
			"ens3/2001:db8:1:0:0:0:0:0:public ens4/192.168.20.0:cluster_interconnect ens5/192.168.21.0:cluster_interconnect", "ora1-vip,ora2-vip,ora3-vip"},
	} {
		f, err := os.Open(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseCRSConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var nets []string
		for _, n := range c.Networks {
			nets = append(nets, n.Adapter+"/"+n.Subnet+":"+n.Use)
		}
		if got := strings.Join(c.Nodes, ","); got != tc.nodes {
			t.Errorf("%s: nodes %s, want %s", tc.file, got, tc.nodes)
		}
		if got := strings.Join(nets, " "); got != tc.nets {
			t.Errorf("%s: networks %s, want %s", tc.file, got, tc.nets)
		}
		if got := strings.Join(c.VIPs, ","); got != tc.vips {
			t.Errorf("%s: VIPs %s, want %s", tc.file, got, tc.vips)
		}
	}
}

func TestParseCRSConfigErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "not a crsconfig_params",
		"this is not\na params file\n":          "not a crsconfig_params",
		"NODE_NAME_LIST=rac1,rac 2\n":           `"rac 2" is not a host name`,
		"NODE_NAME_LIST=rac1,$(reboot)\n":       "is not a host name",
		"NETWORKS=eth1-192.168.10.0\n":          "NETWORKS",
		"NETWORKS=\"eth1\"/192.168.10.0:\n":     "NETWORKS",
		"NETWORKS=cluster_interconnect,\"x\"\n": "NETWORKS",
	} {
		_, err := ParseCRSConfig(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestParseOLSNodes(t *testing.T) {
	for file, want := range map[string]string{
		"olsnodes.txt":       "rac1,rac2",
		"olsnodes-n-s-t.txt": "rac1,rac2,rac3",
		"olsnodes-down.txt":  `error: olsnodes said "PRCO-19: Failure retrieving list of nodes in the cluster"`,
		// A name first on each line is all the format promises.
		"not-params.txt": "this,a",
	} {
		f, err := os.Open(filepath.Join("testdata/clusterware", file))
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := ParseOLSNodes(f)
		f.Close()
		got := strings.Join(nodes, ",")
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != want {
			t.Errorf("%s: %s, want %s", file, got, want)
		}
	}
	if _, err := ParseOLSNodes(strings.NewReader("\n\n")); err == nil {
		t.Error("empty output: no error")
	}
}

func FuzzParseCRSConfig(f *testing.F) {
	for _, p := range []string{nodesTree + "ol8-rac-bond-jumbo/u01/app/19.0.0/grid/crs/install/crsconfig_params", "testdata/clusterware/crsconfig_params-12.1-ipv6"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCRSConfig(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for _, n := range c.Nodes {
			if !hostName.MatchString(n) {
				t.Fatalf("node %q", n)
			}
		}
		for _, n := range c.Networks {
			if n.Adapter == "" || n.Use == "" {
				t.Fatalf("network %+v", n)
			}
		}
	})
}

func FuzzParseOLSNodes(f *testing.F) {
	f.Add([]byte("rac1\nrac2\n"))
	f.Add([]byte("rac1 1 Active Unpinned\nPRCO-19: down\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes, err := ParseOLSNodes(strings.NewReader(string(b)))
		if err == nil && len(nodes) == 0 {
			t.Fatal("no nodes and no error")
		}
		for _, n := range nodes {
			if !hostName.MatchString(n) {
				t.Fatalf("node %q", n)
			}
		}
	})
}

// The captured RAC node: its grid home is found through olr.loc, the nodes
// come from crsconfig_params, the interconnect from its GPnP profile, and
// the node's address on it is bond1's 192.168.10.11 (not the HAIP
// 169.254 address on the same interface).
func TestClusterwareFixture(t *testing.T) {
	root := nodesTree + "ol8-rac-bond-jumbo"
	home, err := FindGridHome(root)
	if err != nil || home != "/u01/app/19.0.0/grid" {
		t.Fatalf("grid home %q, %v", home, err)
	}
	cw, err := LoadClusterware(context.Background(), filepath.Join(root, home))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cw.Nodes, ","); got != "rac1,rac2" || !strings.HasSuffix(cw.NodesFrom, "crs/install/crsconfig_params") {
		t.Errorf("nodes %s from %s", got, cw.NodesFrom)
	}
	if len(cw.Networks) != 1 || cw.Networks[0].Adapter != "bond1" || !strings.HasSuffix(cw.NetworksFrom, "profile.xml") {
		t.Errorf("networks %+v from %s", cw.Networks, cw.NetworksFrom)
	}
	src, err := inventory.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv, err := inventory.Gather(context.Background(), src, inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	addrs, missing := InterconnectAddrs(inv.Interfaces, cw.Networks)
	if fmt.Sprint(addrs) != "[192.168.10.11]" || missing != nil {
		t.Errorf("addresses %v, missing %v", addrs, missing)
	}
	if _, err := FindGridHome(t.TempDir()); err == nil {
		t.Error("empty root: a grid home found")
	}
}

func TestInterconnectAddrs(t *testing.T) {
	ifs := []inventory.Interface{
		{Name: "eth0", Addresses: []string{"10.0.1.11/24"}},
		{Name: "eth1", Addresses: []string{"169.254.10.3/19", "192.168.10.11/24", "fd00:10::11/64", "fe80::1/64"}},
		{Name: "eth2", Addresses: []string{"192.168.11.11/24"}},
	}
	net := func(a, s string) inventory.ClusterNetwork {
		return inventory.ClusterNetwork{Adapter: a, Subnet: s, Use: "cluster_interconnect"}
	}
	for _, tc := range []struct {
		nets          []inventory.ClusterNetwork
		want, missing string
	}{
		{[]inventory.ClusterNetwork{net("eth1", "192.168.10.0"), net("eth2", "192.168.11.0")}, "[192.168.10.11 192.168.11.11]", ""},
		{[]inventory.ClusterNetwork{net("eth*", "192.168.11.0"), net("eth1", "fd00:10::")}, "[192.168.11.11 fd00:10::11]", ""},
		{[]inventory.ClusterNetwork{net("eth1", "")}, "[192.168.10.11]", ""},
		{[]inventory.ClusterNetwork{net("eth1", "192.168.12.0"), net("ib0", "192.168.13.0")}, "[invalid IP invalid IP]",
			"interconnect network 1 (eth1/192.168.12.0): no address in subnet 192.168.12.0 on eth1|interconnect network 2 (ib0/192.168.13.0): no interface named ib0"},
	} {
		a, m := InterconnectAddrs(ifs, tc.nets)
		if fmt.Sprint(a) != tc.want || strings.Join(m, "|") != tc.missing {
			t.Errorf("%v: %v %q, want %s %q", tc.nets, a, m, tc.want, tc.missing)
		}
	}
}

// A network some node lacks is dropped for every node, so that the i-th
// address of each stays on network i.
func TestAlignInterconnect(t *testing.T) {
	nets := []inventory.ClusterNetwork{
		{Adapter: "eth1", Subnet: "192.168.10.0", Use: "cluster_interconnect"},
		{Adapter: "eth2", Subnet: "192.168.11.0", Use: "cluster_interconnect"},
	}
	mk := func(name string, addrs ...string) *NodeResult {
		var ifs []inventory.Interface
		for i, a := range addrs {
			ifs = append(ifs, inventory.Interface{Name: fmt.Sprintf("eth%d", i+1), Addresses: []string{a}})
		}
		r := &NodeResult{Name: name}
		r.Check = checkWith(ifs)
		return r
	}
	a, b := mk("a", "192.168.10.1/24", "192.168.11.1/24"), mk("b", "192.168.10.2/24", "10.9.9.9/24")
	cw := &Clusterware{GridHome: "/g", Networks: nets}
	alignInterconnect(cw, []*NodeResult{a, b})
	if fmt.Sprint(a.Interconnect, b.Interconnect) != "[192.168.10.1] [192.168.10.2]" || a.InterconnectFrom != "clusterware" {
		t.Errorf("a %v b %v", a.Interconnect, b.Interconnect)
	}
	if len(cw.Notes) != 1 || !strings.Contains(cw.Notes[0], "b: interconnect network 2 (eth2/192.168.11.0): no address in subnet") {
		t.Errorf("notes %q", cw.Notes)
	}
}

// A grid home whose olsnodes runs: its nodes win over crsconfig_params';
// one that fails (the stack is down) falls back to crsconfig_params and
// says why.
func TestLoadClusterwareOLSNodes(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"bin", "crs/install"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(home, p), []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("crs/install/crsconfig_params", "NODE_NAME_LIST=rac1,rac2\nNETWORKS=\"eth1\"/192.168.10.0:cluster_interconnect\n", 0o644)
	write("bin/olsnodes", "#!/bin/sh\nprintf 'rac1\\nrac2\\nrac3\\n'\n", 0o755)
	cw, err := LoadClusterware(context.Background(), home)
	if err != nil || cw.NodesFrom != "olsnodes" || strings.Join(cw.Nodes, ",") != "rac1,rac2,rac3" {
		t.Fatalf("%+v, %v", cw, err)
	}
	if len(cw.Networks) != 1 || !strings.HasSuffix(cw.NetworksFrom, "crsconfig_params") {
		t.Errorf("networks %+v from %s", cw.Networks, cw.NetworksFrom)
	}
	write("bin/olsnodes", "#!/bin/sh\necho 'PRCO-19: Failure retrieving list of nodes in the cluster'\nexit 1\n", 0o755)
	cw, err = LoadClusterware(context.Background(), home)
	if err != nil || strings.Join(cw.Nodes, ",") != "rac1,rac2" || !strings.Contains(cw.OLSNodes, "PRCO-19") {
		t.Fatalf("%+v, %v", cw, err)
	}
	os.Remove(filepath.Join(home, "crs/install/crsconfig_params"))
	if _, err := LoadClusterware(context.Background(), home); err == nil || !strings.Contains(err.Error(), "PRCO-19") {
		t.Errorf("neither source: %v", err)
	}
}
