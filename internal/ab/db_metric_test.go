package ab

import (
	"strings"
	"testing"
)

// A db bench over a Galera cluster gets the cluster's figures as default
// metrics; the lab's per-interface sums are reachable by JSON path.
func TestGaleraDefaultMetrics(t *testing.T) {
	doc := `{"schema":"interlink.db/v1","tps":612.5,"latency":{"p50_ns":7000000,"p99_ns":40000000},"conflicts_per_sec":2.5,
		"galera":{"cert_failures_per_sec":1.5,"flow_control_paused_ns":120000000,"replicated_bytes_per_tx":1520.5},
		"lab":{"process_cpu_ns_per_tx":2100000,"tcp_out_segs_per_tx":56.5,"interfaces":{"eth1":{"packets_per_tx":17.1}}}}`
	ms := chooseMetrics([]byte(doc))
	var names []string
	got := map[string]float64{}
	for _, m := range append(ms, mustMetric(t, "cert_failures_per_sec"), mustMetric(t, "lab_cpu_per_tx"), mustMetric(t, "lab_tcp_segs_per_tx"), mustMetric(t, "ic=json:lab.interfaces.eth1.packets_per_tx")) {
		names = append(names, m.Name)
		v, err := m.Extract([]byte(doc), ParseJSON([]byte(doc)), 0)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		got[m.Name] = v
	}
	if strings.Join(names[:6], " ") != "tps latency_p50 latency_p99 conflicts_per_sec flow_control_paused replicated_bytes_per_tx" {
		t.Errorf("metrics %v", names)
	}
	want := map[string]float64{"tps": 612.5, "latency_p99": 4e7, "conflicts_per_sec": 2.5, "flow_control_paused": 1.2e8,
		"replicated_bytes_per_tx": 1520.5, "cert_failures_per_sec": 1.5, "lab_cpu_per_tx": 2.1e6, "lab_tcp_segs_per_tx": 56.5, "ic": 17.1}
	for n, v := range want {
		if got[n] != v {
			t.Errorf("%s = %v, want %v", n, got[n], v)
		}
	}
	// PostgreSQL's runs keep their defaults.
	if pg := chooseMetrics([]byte(`{"schema":"interlink.db/v1","tps":1}`)); len(pg) != 5 || pg[3].Name != "packets_per_tx" {
		t.Errorf("PostgreSQL metrics %+v", pg)
	}
}

func mustMetric(t *testing.T, s string) Metric {
	t.Helper()
	m, err := ParseMetric(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDBMetricNotMeasured: a db run whose interface counters or WAL
// position could not be read says so in the section's "error" and leaves
// its figures 0; taking that 0 as the run's packets or WAL per
// transaction would put a false value in the medians. The metric fails
// for that run, naming the section and why; the others still extract.
func TestDBMetricNotMeasured(t *testing.T) {
	doc := `{"schema":"interlink.db/v1","tps":612.5,"latency":{"p50_ns":7000000},
		"local":{"interface":"","packets_per_tx":0,"cpu_ns_per_tx":0,"error":"route to 10.0.0.2: no interface"},
		"wal":{"bytes":0,"bytes_per_tx":0,"error":"the server is a standby: the WAL is the primary's"}}`
	for name, want := range map[string]string{
		"packets_per_tx":   "metric packets_per_tx: local not measured in this run: route to 10.0.0.2: no interface",
		"wal_bytes_per_tx": "metric wal_bytes_per_tx: wal not measured in this run: the server is a standby: the WAL is the primary's",
	} {
		_, err := mustMetric(t, name).Extract([]byte(doc), ParseJSON([]byte(doc)), 0)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if v, err := mustMetric(t, "tps").Extract([]byte(doc), ParseJSON([]byte(doc)), 0); err != nil || v != 612.5 {
		t.Errorf("tps: %v, %v", v, err)
	}
}
