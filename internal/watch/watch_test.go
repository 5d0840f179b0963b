package watch

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/latency"
	nodemetrics "github.com/interlink/interlink/internal/metrics"
	"github.com/interlink/interlink/internal/rules"
)

// The example alerting rules parse, and every interlink metric they use is
// one the watch or an agent with --metrics exposes (a renamed metric must
// not silence an alert).
func TestAlertRulesUseExposedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../contrib/prometheus/interlink-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	w := New(reg)
	// Touch every vector so it is gathered.
	w.m.mtu.WithLabelValues("a", "b", "1")
	w.m.loss.WithLabelValues("a", "b", "1")
	w.m.problem.WithLabelValues("a", "b", "1")
	w.m.verdict.WithLabelValues("a", "b", "1", "ok")
	w.m.up.WithLabelValues("a")
	w.m.handshake.WithLabelValues("a").Observe(0.001)
	w.m.rtt.observe("a", "b", "1", latency.Summary{Count: 1, Min: 1e5, P50: 1e5, P90: 1e5, P99: 1e5, Max: 1e5, Mean: 1e5})
	// The agent's node metrics, as agent --metrics registers them.
	snmp := filepath.Join(t.TempDir(), "snmp")
	os.WriteFile(snmp, []byte("Ip: ReasmReqds ReasmOKs ReasmFails ReasmTimeout FragOKs FragFails FragCreates\nIp: 1 1 1 1 1 1 1\n"), 0o644)
	nodemetrics.RegisterIP(reg, snmp)
	nodemetrics.RegisterAgent(reg, nodemetrics.AgentStats{Active: func() int { return 0 }, Pending: func() int { return 0 }, Sessions: func() int64 { return 0 }})
	c := nodemetrics.NewChecker(reg, func(context.Context) (*rules.Result, error) { return &rules.Result{}, nil }, time.Hour, nil)
	if err := c.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, mf := range fams {
		exposed[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_SUMMARY || mf.GetType() == dto.MetricType_HISTOGRAM {
			exposed[mf.GetName()+"_sum"], exposed[mf.GetName()+"_count"] = true, true
		}
	}
	for _, name := range []string{"interlink_path_rtt_seconds_sum", "interlink_ip_reassembly_failures_total", "interlink_check_findings",
		"interlink_check_last_run_timestamp_seconds"} {
		if !strings.Contains(string(b), name) {
			t.Errorf("no alert uses %s", name)
		}
	}
	name := regexp.MustCompile(`interlink_[a-z_]+`)
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			n++
			for _, m := range name.FindAllString(r.Expr, -1) {
				if !exposed[m] {
					t.Errorf("alert %s uses %s, which neither watch nor agent --metrics exposes", r.Alert, m)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("%d rules", n)
	}
}
