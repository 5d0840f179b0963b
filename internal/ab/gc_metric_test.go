package ab

import (
	"strings"
	"testing"
)

// A bench --mode gc document gets its own default metrics, read from the
// top of the document; the 3-way figures by name, and a run without 3-way
// transfers (2 nodes) says the figure is not there rather than zero.
func TestGCMetrics(t *testing.T) {
	doc := `{"schema":"interlink.gc/v1","total":{"blocks_per_sec":21345.5,"lost":3,"cpu_ns_per_block":11800,
		"two_way":{"p50_ns":118000,"mean_ns":150000},"three_way":{"p50_ns":161000},"ping_8k_avg_ns":98000}}`
	var names []string
	got := map[string]float64{}
	for _, m := range chooseMetrics([]byte(doc)) {
		names = append(names, m.Name)
		v, err := m.Extract([]byte(doc), ParseJSON([]byte(doc)), 0)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		got[m.Name] = v
	}
	if strings.Join(names, " ") != "gc_blocks_per_sec gc_2way_p50 gc_lost gc_cpu_per_block" {
		t.Errorf("metrics %v", names)
	}
	if got["gc_blocks_per_sec"] != 21345.5 || got["gc_2way_p50"] != 118000 || got["gc_lost"] != 3 || got["gc_cpu_per_block"] != 11800 {
		t.Errorf("values %v", got)
	}
	for name, want := range map[string]float64{"gc_3way_p50": 161000, "gc_2way_mean": 150000, "gc_ping_8k_avg": 98000} {
		m, err := ParseMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := m.Extract(nil, ParseJSON([]byte(doc)), 0); err != nil || v != want || !m.LowerBetter {
			t.Errorf("%s: %g %v (lower is better: %v)", name, v, err, m.LowerBetter)
		}
	}
	m, _ := ParseMetric("gc_3way_p50")
	two := `{"schema":"interlink.gc/v1","total":{"blocks_per_sec":1,"lost":0,"two_way":{"p50_ns":1}}}`
	if _, err := m.Extract(nil, ParseJSON([]byte(two)), 0); err == nil || !strings.Contains(err.Error(), "three_way") {
		t.Errorf("no 3-way in a 2-node run: %v", err)
	}
	if _, err := m.Extract(nil, ParseJSON([]byte(`{"schema":"interlink.bench/v1"}`)), 0); err == nil {
		t.Error("a gc metric read a bench document")
	}
}
