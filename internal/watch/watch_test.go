package watch

import (
	"os"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/latency"
)

// The example alerting rules parse, and every interlink metric they use is
// one the watch exposes (a renamed metric must not silence an alert).
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
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, mf := range fams {
		exposed[mf.GetName()] = true
	}
	name := regexp.MustCompile(`interlink_[a-z_]+`)
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			n++
			for _, m := range name.FindAllString(r.Expr, -1) {
				if !exposed[m] {
					t.Errorf("alert %s uses %s, which watch does not expose", r.Alert, m)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("%d rules", n)
	}
}
