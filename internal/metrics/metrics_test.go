package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/interlink/interlink/internal/rules"
)

const snmp = `Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates
Ip: 1 64 1000 0 0 0 0 0 1000 900 0 0 2 120 38 5 17 3 52
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 10 0 0 10 0 0 0 0 0
`

// serve starts Serve on a loopback port for reg and returns its URL.
func serve(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, reg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// scrape GETs url and parses the answer with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

func TestIPCounters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snmp")
	if err := os.WriteFile(path, []byte(snmp), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	RegisterIP(reg, path)
	url := serve(t, reg)
	fams := scrape(t, url+"/metrics")
	want := map[string]float64{
		"interlink_ip_reassembly_required_total": 120, "interlink_ip_reassembly_ok_total": 38,
		"interlink_ip_reassembly_failures_total": 5, "interlink_ip_reassembly_timeouts_total": 2,
		"interlink_ip_fragmented_ok_total": 17, "interlink_ip_fragmentation_failures_total": 3,
		"interlink_ip_fragments_created_total": 52,
	}
	for name, v := range want {
		f := fams[name]
		if f == nil || f.GetType() != dto.MetricType_COUNTER || len(f.Metric) != 1 || f.Metric[0].GetCounter().GetValue() != v {
			t.Errorf("%s: %v, want counter %v", name, f, v)
		}
	}

	// Read-only: nothing but GET or HEAD of /metrics.
	for _, c := range []struct {
		method, path string
		code         int
	}{{"POST", "/metrics", 405}, {"PUT", "/metrics", 405}, {"GET", "/", 404}, {"GET", "/debug/pprof/", 404}, {"HEAD", "/metrics", 200}} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.code)
		}
	}

	// A file that cannot be read fails its series, not the scrape.
	os.Remove(path)
	RegisterAgent(reg, AgentStats{Active: func() int { return 2 }, Pending: func() int { return 1 }, Sessions: func() int64 { return 7 }})
	fams = scrape(t, url+"/metrics")
	if fams["interlink_ip_reassembly_failures_total"] != nil || fams["interlink_agent_sessions_total"].GetMetric()[0].GetCounter().GetValue() != 7 ||
		fams["interlink_agent_sessions_active"].GetMetric()[0].GetGauge().GetValue() != 2 {
		t.Errorf("after the snmp file went away: %v", fams)
	}
}

func TestListen(t *testing.T) {
	for _, addr := range []string{"nonsense", ":", "127.0.0.1", "127.0.0.1:99999", "256.0.0.1:9472"} {
		ln, err := Listen(addr)
		if err == nil {
			ln.Close()
			t.Errorf("Listen(%q) succeeded", addr)
		} else if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Listen(%q): %v (want one line naming the address)", addr, err)
		}
	}
}

// The findings gauge counts findings per rule and severity, holds a zero
// for every other rule and severity, keeps the last good run's values when
// a run fails, and the timestamp appears only after a successful run.
func TestChecker(t *testing.T) {
	runs := 0
	audit := func(ctx context.Context) (*rules.Result, error) {
		runs++
		switch runs {
		case 1:
			return &rules.Result{Findings: []rules.Finding{
				{Rule: "NET-UDP-BUFFERS", Severity: rules.Warning}, {Rule: "NET-UDP-BUFFERS", Severity: rules.Warning},
				{Rule: "NET-PORT-RANGE", Severity: rules.Warning}, {Rule: "X-NEW", Severity: rules.Critical},
			}}, nil
		case 2:
			return nil, errors.New("nothing read")
		}
		return &rules.Result{}, nil
	}
	reg := prometheus.NewRegistry()
	c := NewChecker(reg, audit, time.Hour, nil)
	url := serve(t, reg) + "/metrics"
	if fams := scrape(t, url); fams["interlink_check_last_run_timestamp_seconds"] != nil || fams["interlink_check_findings"] != nil {
		t.Fatalf("before the first run: %v", fams)
	}
	findings := func() map[string]float64 {
		out := map[string]float64{}
		for _, m := range scrape(t, url)["interlink_check_findings"].GetMetric() {
			l := map[string]string{}
			for _, lp := range m.Label {
				l[lp.GetName()] = lp.GetValue()
			}
			out[l["rule"]+" "+l["severity"]] = m.GetGauge().GetValue()
		}
		return out
	}
	before := time.Now()
	if err := c.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	f := findings()
	if f["NET-UDP-BUFFERS warning"] != 2 || f["NET-PORT-RANGE warning"] != 1 || f["X-NEW critical"] != 1 {
		t.Errorf("first run: %v", f)
	}
	nz := 0
	for _, v := range f {
		if v == 0 {
			nz++
		}
	}
	if nz < 10 {
		t.Errorf("only %d zero series: every rule should have one per severity it may emit", nz)
	}
	ts := scrape(t, url)["interlink_check_last_run_timestamp_seconds"]
	// The run's own time: not before it started, not after it returned.
	if ts == nil || ts.Metric[0].GetGauge().GetValue() < float64(before.Unix()) || ts.Metric[0].GetGauge().GetValue() > float64(after.UnixNano())/1e9 {
		t.Errorf("timestamp after a run between %s and %s: %v", before, after, ts)
	}
	if err := c.Once(context.Background()); err == nil {
		t.Fatal("second run: no error")
	}
	if f := findings(); f["NET-UDP-BUFFERS warning"] != 2 {
		t.Errorf("a failed run changed the findings: %v", f)
	}
	if v := scrape(t, url)["interlink_check_failures_total"].GetMetric()[0].GetCounter().GetValue(); v != 1 {
		t.Errorf("check_failures_total %v", v)
	}
	c.Once(context.Background())
	if f := findings(); f["NET-UDP-BUFFERS warning"] != 0 || f["X-NEW critical"] != 0 {
		t.Errorf("a clean run left findings: %v", f)
	}
}

// The live audit of this machine runs and judges something.
func TestLiveAudit(t *testing.T) {
	res, err := LiveAudit("/", rules.Config{})(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Node.Hostname == "" || len(res.Inventory.Interfaces) == 0 {
		t.Errorf("live audit: %+v", res.Node)
	}
}
