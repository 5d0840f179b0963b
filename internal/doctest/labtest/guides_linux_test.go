//go:build linux

package labtest

import (
	"os"
	"testing"

	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	labuptest.Main(m, "guide lab tests", &bin, "td-interlink-")
}

// The guides run at once, each in labs of its own names (labs coexist):
// they measure nothing against a threshold.

func run(t *testing.T, guide string, labs map[string]string) {
	t.Parallel()
	Run(t, "../../..", bin, guide, labs)
}

// TestJumboFramesGuide runs the jumbo frames guide in its demo lab: the
// demo kept up, pmtu to the blackholed and the healthy node, ping and
// tracepath in the blackhole lab, the mesh, the port fixed and the mesh
// again, the blocks bench on both networks; and its forms for a real node
// (check, the token, the agent, pmtu) on node1 of a pair of lab nodes that
// plays them.
func TestJumboFramesGuide(t *testing.T) {
	t.Parallel()
	RunCluster(t, "../../..", bin, "docs/guides/jumbo-frames.md", map[string]string{"demo": "td-jumbo", "blackhole": "td-jumbo-bh"},
		Cluster{Lab: "td-jumbo-real", Topology: pairTopology, Agents: []string{"node1", "node2"}})
}

// pairTopology is the two real nodes the jumbo frames guide's forms for a
// real node were written for: node1 and node2, eth1 on 192.168.10.0/24 at
// MTU 9000.
const pairTopology = `name: pair
switches:
  ic: {mtu: 9000}
nodes:
  node1:
    links:
      - {name: eth1, switch: ic, address: 192.168.10.1/24}
  node2:
    links:
      - {name: eth1, switch: ic, address: 192.168.10.2/24}
`

// TestNFSGuideDirectNFS proves the Direct NFS paths of the NFS guide's
// oranfstab in the dnfs lab, and compares its two option sets with ab
// in the nfs lab.
func TestNFSGuideDirectNFS(t *testing.T) {
	run(t, "docs/guides/nfs.md", map[string]string{"dnfs": "td-dnfs", "nfs": "td-nfs"})
}

// TestProveAChangeGuide runs the ab experiments of the guide in its demo
// lab, shortened (4 runs per arm of 1 s): the report's shape, its
// metrics, the exit code.
func TestProveAChangeGuide(t *testing.T) {
	run(t, "docs/guides/prove-a-change.md", map[string]string{"demo": "td-ab"})
}

// TestHostInTheRoundTripGuide runs the guide in its demo lab (its agents
// allowing CPU latency holds): the split, the same with the hosts kept
// awake, and the three ab experiments, shortened; what the machine's load
// decides (verdicts, intervals, the idle line's conclusion) is left out of
// the comparison (abShape, benchShape).
func TestHostInTheRoundTripGuide(t *testing.T) {
	run(t, "docs/guides/host-in-the-round-trip.md", map[string]string{"hostrt": "td-hostrt"})
}

// TestLogonStormGuide runs the storm of the guide against the pg lab's
// PostgreSQL, straight and through the gate.
func TestLogonStormGuide(t *testing.T) {
	run(t, "docs/guides/logon-storm.md", map[string]string{"pg": "td-storm"})
}

// tourTopology is the cluster the README's tour lines were written for:
// node1..node3 on an interconnect 192.168.10.0/24 at MTU 9000, node1's
// interface named bond1, node3's switch port left at 1500 (the matrix the
// README shows).
const tourTopology = `name: tour
switches:
  ic: {mtu: 9000}
  pub: {mtu: 1500}
nodes:
  node1:
    links:
      - {name: bond1, switch: ic, address: 192.168.10.1/24}
      - {name: eth0, switch: pub, address: 192.0.2.1/24}
  node2:
    links:
      - {name: eth1, switch: ic, address: 192.168.10.2/24}
      - {name: eth0, switch: pub, address: 192.0.2.2/24}
  node3:
    links:
      - {name: eth1, switch: ic, address: 192.168.10.3/24, port_mtu: 1500}
      - {name: eth0, switch: pub, address: 192.0.2.3/24}
`

// tourInventory is the Ansible inventory of the tour's cluster line, as
// the real cluster guide writes one.
const tourInventory = `[rac]
node1 ansible_host=192.0.2.1 interconnect=192.168.10.1
node2 ansible_host=192.0.2.2 interconnect=192.168.10.2
node3 ansible_host=192.0.2.3 interconnect=192.168.10.3
[rac:vars]
ansible_user=oracle
`

// TestREADMETour runs the README's tour lines on node1 of a lab that
// plays the cluster they were written for: agents on every node with the
// token in /etc/interlink (the test's own /etc), the nodes file, two AWR
// reports of a real RAC (before and after jumbo frames); the lab demo kept
// up (make demo, the README's first line) for the ab line, and the galera
// lab.
func TestREADMETour(t *testing.T) {
	t.Parallel()
	files := map[string]string{"nodes": "node1 192.168.10.1 192.168.10.1\nnode2 192.168.10.2 192.168.10.2\nnode3 192.168.10.3 192.168.10.3\n",
		"hosts.ini": tourInventory}
	for name, src := range map[string]string{"before/awrrpt_1_100_101.txt": "11.2.0.3-awrrpt-rac-mtu1500.txt", "after/awrrpt_1_200_201.txt": "11.2.0.3-awrrpt-rac-mtu9000.txt"} {
		b, err := os.ReadFile("../../awr/testdata/" + src)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	RunCluster(t, "../../..", bin, "README.md", map[string]string{"demo": "td-tour-demo", "galera": "td-tour-galera", "replica": "td-tour-replica"},
		Cluster{Lab: "td-tour", Topology: tourTopology, Files: files, Token: true, Agents: []string{"node1", "node2", "node3"},
			Setup: []string{"interlink lab demo --keep --time 1s >/dev/null"},
			SSH:   &SSH{User: "oracle", Nodes: map[string]string{"node1": "192.0.2.1", "node2": "192.0.2.2", "node3": "192.0.2.3"}}})
}

// racTopology is the cluster the real cluster guide was written for:
// rac1 and rac2 with their management addresses (192.0.2.11, .12) and two
// interconnect networks at MTU 9000 (10.0.0.0/24, 10.0.1.0/24), sshd
// on both for the oracle account; ops (192.0.2.9) is the host cluster
// runs from.
const racTopology = `name: rac
switches:
  pub: {mtu: 1500}
  ic0: {mtu: 9000}
  ic1: {mtu: 9000}
nodes:
  rac1:
    links:
      - {name: eth0, switch: pub, address: 192.0.2.11/24}
      - {name: eth1, switch: ic0, address: 10.0.0.1/24}
      - {name: eth2, switch: ic1, address: 10.0.1.1/24}
  rac2:
    links:
      - {name: eth0, switch: pub, address: 192.0.2.12/24}
      - {name: eth1, switch: ic0, address: 10.0.0.2/24}
      - {name: eth2, switch: ic1, address: 10.0.1.2/24}
  ops:
    links:
      - {name: eth0, switch: pub, address: 192.0.2.9/24}
`

// TestRealClusterGuide runs the real cluster guide on rac1 of a lab that
// plays its cluster: the token written into the test's own /etc, the
// agent by hand (stopped), agents on both nodes as the packaged unit runs
// them, watch (stopped) and the mesh with its history and diff.
func TestRealClusterGuide(t *testing.T) {
	t.Parallel()
	RunCluster(t, "../../..", bin, "docs/guides/real-cluster.md", nil, Cluster{Lab: "td-rac", Topology: racTopology,
		Agents: []string{"rac1", "rac2"}, SSH: &SSH{User: "oracle", Nodes: map[string]string{"rac1": "192.0.2.11", "rac2": "192.0.2.12"}}})
}
