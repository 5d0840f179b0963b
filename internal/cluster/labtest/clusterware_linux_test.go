//go:build linux

package labtest

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/traffic"
)

// saveJSON, when set, keeps the --json output of TestClusterClusterware
// there (internal/report/testdata/lab-cluster.json is made so: go test
// ./internal/cluster/labtest -run ClusterClusterware -save-json
// $PWD/internal/report/testdata/lab-cluster.json).
var saveJSON = flag.String("save-json", "", "write TestClusterClusterware's cluster --json output to this file")

// gpnpProfile is a GPnP profile as Clusterware writes it (signature cut):
// eth0 public, eth1 the interconnect in IPv4 and IPv6.
const gpnpProfile = `<?xml version="1.0" encoding="UTF-8"?><gpnp:GPnP-Profile Version="1.0" xmlns="http://www.grid-pnp.org/2005/11/gpnp-profile" xmlns:gpnp="http://www.grid-pnp.org/2005/11/gpnp-profile" xmlns:orcl="http://www.oracle.com/gpnp/2005/11/gpnp-profile" ProfileSequence="4" ClusterName="t16-cl"><gpnp:Network-Profile><gpnp:HostNetwork id="gen" HostName="*"><gpnp:Network id="net1" IP="198.18.0.0" Adapter="eth0" Use="public"/><gpnp:Network id="net2" IP="198.18.10.0" Adapter="eth1" Use="cluster_interconnect"/><gpnp:Network id="net3" IP="fd00:10::" Adapter="eth1" Use="cluster_interconnect"/></gpnp:HostNetwork></gpnp:Network-Profile><orcl:CSS-Profile id="css" DiscoveryString="+asm" LeaseDuration="400"/></gpnp:GPnP-Profile>
`

// The nodes come from a grid home (crsconfig_params; node4's sshd is
// down), each node's interconnect addresses from its own interfaces in the
// networks of the GPnP profile; a blocks bench runs from each node to the
// next over the interconnect; the HTML report and `interlink report` of
// the saved JSON hold the nodes, the mesh heatmap and the bench.
func TestClusterClusterware(t *testing.T) {
	e := setup(t)
	kh := e.knownHosts(t, "known_hosts", e.hostLine(1, e.hostKeys[0]), e.hostLine(2, e.hostKeys[1]),
		e.hostLine(3, e.hostKeys[2]), e.hostLine(4, e.hostKeys[3]))
	home := filepath.Join(e.dir, "grid")
	for _, d := range []string{"crs/install", "gpnp/profiles/peer"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(home, "crs/install/crsconfig_params"), `# crsconfig_params of the lab cluster
ORACLE_HOME=`+home+`
CLUSTER_NAME=t16-cl
HOST_NAME_LIST=node1,node2,node3,node4
NODE_NAME_LIST=node1,node2,node3,node4
CRS_NODEVIPS='node1-vip/255.255.255.0/eth0,node2-vip/255.255.255.0/eth0,node3-vip/255.255.255.0/eth0,node4-vip/255.255.255.0/eth0'
NETWORKS="eth0"/198.18.0.0:public,"eth1"/198.18.10.0:cluster_interconnect
`, 0o644)
	write(t, filepath.Join(home, "gpnp/profiles/peer/profile.xml"), gpnpProfile, 0o644)
	// The node names go to SSH as they are; ~/.ssh/config maps them.
	var cfg strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&cfg, "Host node%d\n  HostName 198.18.0.%d\n  User root\n", i, i)
	}
	sshCfg := write(t, filepath.Join(e.dir, "ssh_config"), cfg.String(), 0o644)
	html := filepath.Join(e.dir, "cluster.html")

	out, stderr, code := run(t, e.ops, "cluster", "--clusterware", "--grid-home", home, "--ssh-config", sshCfg, "--known-hosts", kh,
		"--identity", filepath.Join(e.dir, "id"), "--expect", "9000", "--bench", "blocks", "--bench-time", "1s", "--html", html, "--json")
	if code != 2 {
		t.Errorf("exit %d, want 2 (node3's paths are below --expect 9000, its blocks are lost)\n%s", code, stderr)
	}
	saved := write(t, filepath.Join(e.dir, "cluster.json"), out, 0o644)
	if *saveJSON != "" {
		// The fixture of internal/report's cluster tests is made so.
		write(t, *saveJSON, out, 0o644)
	}
	var res cluster.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s", err, stderr)
	}
	if cw := res.Clusterware; cw == nil || !strings.HasSuffix(cw.NodesFrom, "crs/install/crsconfig_params") ||
		strings.Join(cw.Nodes, ",") != "node1,node2,node3,node4" || len(cw.Networks) != 2 || !strings.HasSuffix(cw.NetworksFrom, "profile.xml") {
		t.Fatalf("clusterware %+v", res.Clusterware)
	}
	if len(res.Nodes) != 4 {
		t.Fatalf("%d nodes", len(res.Nodes))
	}
	for i, n := range res.Nodes[:3] {
		want := fmt.Sprintf("[198.18.10.%d fd00:10::%d]", i+1, i+1)
		if n.Status != cluster.StatusOK || fmt.Sprint(n.Interconnect) != want || n.InterconnectFrom != "clusterware" {
			t.Errorf("%s: %s, interconnect %v from %q, want %s found on the node: %s", n.Name, n.Status, n.Interconnect, n.InterconnectFrom, want, n.Error)
		}
		if n.Check == nil || n.Check.Interconnect.From != "gpnp" {
			t.Errorf("%s: check did not read the grid home's GPnP profile: %+v", n.Name, n.Check)
		}
	}
	if n4 := res.Nodes[3]; n4.Status != cluster.StatusUnreachable || n4.Cause != cluster.CauseRefused || n4.HostName != "198.18.0.4" {
		t.Errorf("node4: %s (%s) at %s, want unreachable (refused) at 198.18.0.4 from ssh_config", n4.Status, n4.Cause, n4.HostName)
	}
	if res.Mesh == nil || len(res.Mesh.Paths) != 12 {
		t.Fatalf("mesh %v (%s), want 12 paths", res.Mesh != nil, res.MeshSkipped)
	}
	for _, p := range res.Mesh.Paths {
		if bad := p.From == "node3" || p.To == "node3"; bad != (p.Verdict != "ok" || p.PathMTU != 9000) {
			t.Errorf("network %d %s -> %s: %s %d", p.Network, p.From, p.To, p.Verdict, p.PathMTU)
		}
	}

	// The bench: node1 -> node2 -> node3 -> node1 on each network. 8 KiB
	// blocks are one 8 KiB packet at MTU 9000, which node3's 1500 switch
	// port drops: every pair with node3 loses its blocks.
	b := res.Bench
	if b == nil || b.Mode != "blocks" || len(b.Pairs) != 6 {
		t.Fatalf("bench %+v", b)
	}
	for _, p := range b.Pairs {
		s := p.Summary()
		if s == nil {
			t.Errorf("%s -> %s network %d: no report: %s", p.From, p.To, p.Network, p.Error)
			continue
		}
		if want := fmt.Sprintf("198.18.10.%c", p.To[4]); p.Network == 1 && p.ToAddr.String() != want {
			t.Errorf("%s -> %s: to %s, want the interconnect address %s", p.From, p.To, p.ToAddr, want)
		}
		t.Logf("%s -> %s network %d: %s %s, limited by %v", p.From, p.To, p.Network, p.Report.Verdict, cluster.BenchFigures("blocks", s), p.Report.LimitedBy)
		withNode3 := p.From == "node3" || p.To == "node3"
		if withNode3 != (p.Report.Verdict == traffic.VerdictFailed) {
			t.Errorf("%s -> %s network %d: verdict %s", p.From, p.To, p.Network, p.Report.Verdict)
		}
		if !withNode3 && (s.PerSec < 100 || s.RTT == nil || s.RTT.P50 <= 0) {
			t.Errorf("%s -> %s: %.0f blocks/s, rtt %+v", p.From, p.To, s.PerSec, s.RTT)
		}
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	// The HTML report, and the same from the saved JSON.
	page := must(os.ReadFile(html))
	report := filepath.Join(e.dir, "report.html")
	if _, stderr, code := run(t, e.ops, "report", saved, "-o", report); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	for name, p := range map[string][]byte{"--html": page, "report": must(os.ReadFile(report))} {
		for _, s := range []string{"cluster: 4 nodes", `class="chart heatmap mesh-heatmap"`, "bench blocks", "check: node1", "crsconfig_params", "198.18.10.1 -&gt; 198.18.10.2", "unreachable (refused)"} {
			if !strings.Contains(string(p), s) {
				t.Errorf("%s page lacks %q", name, s)
			}
		}
	}

	// The text report of the same run says where the nodes and addresses
	// came from: the command prints it with cluster.WriteText when --json
	// is not given (TestClusterInterrupt and TestClusterStall run that path
	// end to end), here from this run's JSON rather than a second run of
	// 20 s.
	var text strings.Builder
	if err := cluster.WriteText(&text, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("text report:\n%s", text.String())
	for _, s := range []string{"nodes from Oracle Clusterware: node1, node2, node3, node4", "node2: 198.18.10.2, fd00:10::2", "bench blocks", "node1  node2  1", "node2 -> node3: no-data"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	if left := e.leftovers(t); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
