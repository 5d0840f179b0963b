//go:build linux

package labtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

// checkWatch runs `interlink watch` in the first node against the agents
// and checks each path's MTU, verdict and node-to-node round trips.
func checkWatch(t *testing.T, nodes []*lab.Node, tok, nodesFile string) {
	file := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(file, []byte(nodesFile), 0o644); err != nil {
		t.Fatal(err)
	}
	n1 := nodes[0]
	addr := n1.Addr("ic", 4).String() + ":9471"
	labuptest.Daemon(t, n1, exec.Command(bin, "watch", "--nodes", file, "--token-file", tok, "--metrics", addr,
		"--interval", "8s", "--expect", "9000"), "watch", "round 1:")
	fams := scrape(t, n1, "http://"+addr+"/metrics")
	rtt := fams["interlink_path_rtt_seconds"]
	if rtt.GetType() != dto.MetricType_SUMMARY {
		t.Fatalf("interlink_path_rtt_seconds: %v", rtt)
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a == b {
				continue
			}
			path := map[string]string{"from": a.Name(), "to": b.Name(), "network": "1"}
			wantMTU, verdict := 9000.0, "ok"
			if a.Name() == "node2" || b.Name() == "node2" {
				wantMTU, verdict = 1500, "blackhole"
			}
			if v, ok := fams.value("interlink_path_mtu_bytes", path); !ok || v != wantMTU {
				t.Errorf("%s -> %s: path MTU %v (%v), want %v", a.Name(), b.Name(), v, ok, wantMTU)
			}
			vpath := map[string]string{"from": a.Name(), "to": b.Name(), "verdict": verdict}
			if v, ok := fams.value("interlink_path_verdict", vpath); !ok || v != 1 {
				t.Errorf("%s -> %s: no verdict %s", a.Name(), b.Name(), verdict)
			}
			checkRTT(t, rtt, path)
		}
	}
}

// checkRTT checks one path's round-trip summary: five quantiles, positive,
// in order, under 100 ms on veth, and a count and sum.
func checkRTT(t *testing.T, f *dto.MetricFamily, path map[string]string) {
	t.Helper()
	for _, m := range f.GetMetric() {
		if !matches(m, path) {
			continue
		}
		s := m.GetSummary()
		qs := s.GetQuantile()
		if len(qs) != 5 || s.GetSampleCount() < 1 || s.GetSampleSum() <= 0 {
			t.Errorf("%s -> %s: rtt count %d, sum %v, %d quantiles (want 5)", path["from"], path["to"], s.GetSampleCount(), s.GetSampleSum(), len(qs))
			return
		}
		prev := 0.0
		for _, q := range qs {
			v := q.GetValue()
			if v <= 0 || v >= 0.1 || v < prev {
				t.Errorf("%s -> %s: rtt quantile %v = %v s; want positive, in order, under 100 ms", path["from"], path["to"], q.GetQuantile(), v)
			}
			prev = v
		}
		t.Logf("%s -> %s rtt: %d probes, min %.3f ms, p50 %.3f ms, p90 %.3f ms, max %.3f ms, mean %.3f ms", path["from"], path["to"],
			s.GetSampleCount(), qs[0].GetValue()*1e3, qs[1].GetValue()*1e3, qs[2].GetValue()*1e3, qs[4].GetValue()*1e3,
			s.GetSampleSum()/float64(s.GetSampleCount())*1e3)
		return
	}
	t.Errorf("%s -> %s: no interlink_path_rtt_seconds", path["from"], path["to"])
}
