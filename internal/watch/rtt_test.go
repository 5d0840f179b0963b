package watch

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/interlink/interlink/internal/latency"
)

// The round trips of a path come out as one Summary series per path, with
// the last round's quantiles and _sum and _count over every round, and
// survive the text format; a path not measured keeps its counters but
// loses its quantiles.
func TestPathRTTSummary(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := New(reg)
	ms := func(v ...float64) []time.Duration {
		var ds []time.Duration
		for _, x := range v {
			ds = append(ds, time.Duration(x*float64(time.Millisecond)))
		}
		return ds
	}
	w.m.rtt.observe("node1", "node2", "1", latency.FromDurations(ms(1, 2, 3, 4)))
	w.m.rtt.observe("node1", "node2", "1", latency.FromDurations(ms(0.5, 0.25)))
	w.m.rtt.observe("node2", "node1", "1", latency.FromDurations(ms(0.3)))
	w.m.rtt.observe("node1", "node3", "1", latency.Summary{}) // unreachable: nothing timed
	w.m.rtt.stale("node2", "node1", "1")

	fams := scrape(t, reg)
	f := fams["interlink_path_rtt_seconds"]
	if f == nil || f.GetType().String() != "SUMMARY" {
		t.Fatalf("interlink_path_rtt_seconds: %v", f)
	}
	got := map[string]map[float64]float64{}
	for _, m := range f.Metric {
		l := map[string]string{}
		for _, lp := range m.Label {
			l[lp.GetName()] = lp.GetValue()
		}
		key := l["from"] + ">" + l["to"]
		s := m.GetSummary()
		q := map[float64]float64{}
		for _, x := range s.Quantile {
			q[x.GetQuantile()] = x.GetValue()
		}
		got[key] = q
		switch key {
		case "node1>node2":
			if s.GetSampleCount() != 6 || !near(s.GetSampleSum(), 0.01075) {
				t.Errorf("%s: count %d sum %v, want 6 and 0.01075 (both rounds)", key, s.GetSampleCount(), s.GetSampleSum())
			}
		case "node2>node1":
			if s.GetSampleCount() != 1 || len(q) != 0 {
				t.Errorf("%s: count %d, quantiles %v; want 1 and none (stale)", key, s.GetSampleCount(), q)
			}
		default:
			t.Errorf("unexpected series %s", key)
		}
	}
	q := got["node1>node2"]
	want := map[float64]float64{0: 0.00025, 0.5: 0.00025, 0.9: 0.0005, 0.99: 0.0005, 1: 0.0005}
	if len(q) != len(want) {
		t.Fatalf("quantiles %v, want %v", q, want)
	}
	for k, v := range want {
		if !near(q[k], v) {
			t.Errorf("quantile %v = %v, want %v (the last round's)", k, q[k], v)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// scrape renders reg in the text format and parses it back as Prometheus
// would.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", b.String(), err)
	}
	return fams
}
