package demo

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
)

// fakeRun has the demo's three nodes without a lab.
func fakeRun() *run {
	r := &run{res: &Result{}}
	for i, name := range []string{"node1", "node2", "node3"} {
		r.nodes = append(r.nodes, nodeAddrs{name: name, icIf: "eth1", icMTU: 9000, icPort: name + "-eth1",
			ic: netip.AddrFrom4([4]byte{198, 18, 10, byte(i + 1)})})
	}
	return r
}

// meshOf makes a mesh result where verdict(from, to) gives each path.
func meshOf(verdict func(from, to string) (pmtu.Verdict, int, string)) *mesh.Result {
	m := &mesh.Result{Nodes: []mesh.Node{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}}}
	for _, a := range m.Nodes {
		for _, b := range m.Nodes {
			if a.Name == b.Name {
				continue
			}
			v, mtu, icmp := verdict(a.Name, b.Name)
			ok := mtu >= ExpectMTU
			m.Paths = append(m.Paths, mesh.Path{From: a.Name, To: b.Name, Network: 1, MeetsExpect: &ok,
				Result: pmtu.Result{Verdict: v, PathMTU: mtu, LocalMTU: 9000, ICMPFrom: icmp}})
		}
	}
	return m
}

func TestDiagnoseOneBadPort(t *testing.T) {
	r := fakeRun()
	d := r.diagnose(meshOf(func(from, to string) (pmtu.Verdict, int, string) {
		if from == "node2" || to == "node2" {
			return pmtu.Blackhole, 1500, ""
		}
		return pmtu.OK, 9000, ""
	}))
	if len(d.Ports) != 1 || d.Ports[0].Node != "node2" || d.Ports[0].PathMTU != 1500 || d.Ports[0].Paths != 4 || d.Ports[0].SwitchPort != "node2-eth1" {
		t.Fatalf("ports %+v", d.Ports)
	}
	if d.ProblemPaths != 4 || d.Unexplained != 0 || d.TracepathMTU != 9000 || d.Good != [2]string{"node1", "node3"} {
		t.Errorf("diagnosis %+v", d)
	}
	r.res.Diagnosis = d
	adv := advise(r.res)
	if len(adv) == 0 || !strings.HasPrefix(adv[0], "node2: the switch port that node2 eth1 (198.18.10.2)") || !strings.Contains(adv[0], "port node2-eth1 on switch ic") {
		t.Errorf("advice %q", adv)
	}
}

func TestDiagnoseHealthy(t *testing.T) {
	r := fakeRun()
	r.res.Diagnosis = r.diagnose(meshOf(func(string, string) (pmtu.Verdict, int, string) { return pmtu.OK, 9000, "" }))
	d := r.res.Diagnosis
	if len(d.Ports) != 0 || d.ProblemPaths != 0 || d.Good != [2]string{"node1", "node2"} {
		t.Errorf("diagnosis %+v", d)
	}
	if adv := advise(r.res); len(adv) != 1 || !strings.Contains(adv[0], "Every interconnect path meets 9000") {
		t.Errorf("advice %q", adv)
	}
}

// A routed hop answers with ICMP: no port to blame, and tracepath would
// have seen the limit, so the demo must not claim it would say 9000.
func TestDiagnoseICMP(t *testing.T) {
	r := fakeRun()
	d := r.diagnose(meshOf(func(from, to string) (pmtu.Verdict, int, string) {
		if from == "node1" && to == "node3" {
			return pmtu.ICMP, 1400, "198.18.10.254"
		}
		return pmtu.OK, 9000, ""
	}))
	if len(d.Ports) != 0 || d.ProblemPaths != 1 || d.Unexplained != 1 || d.ICMPErrors != 1 || d.TracepathMTU != 0 {
		t.Errorf("diagnosis %+v", d)
	}
}
