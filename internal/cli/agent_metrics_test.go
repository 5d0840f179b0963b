package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/interlink/interlink/internal/buftest"
)

// agent --metrics on loopback: the scrape parses, holds the node's IP
// counters, the check findings of the audit (with its timestamp) and the
// agent's sessions, which count a pmtu run.
func TestAgentMetrics(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("agent-metrics-test-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr buftest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"agent", "--listen", "127.0.0.1:0", "--token-file", tok, "--metrics", "127.0.0.1:0", "--check-interval", "10s"}, &bytes.Buffer{}, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("agent exit %d after cancel: %s", code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("agent did not stop 10s after cancel")
		}
	}()
	re := regexp.MustCompile(`listening on (\S+) [\s\S]*metrics on (http://\S+/metrics) \(check every 10s\)`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
		if m = re.FindStringSubmatch(stderr.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("no metrics line after 10s:\n%s", stderr.String())
		}
	}
	if code, out, errs := runCLI(context.Background(), "pmtu", m[1], "--token-file", tok); code != 0 {
		t.Fatalf("pmtu: exit %d\n%s%s", code, out, errs)
	}
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(m[2])
		if err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err = p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if fams["interlink_check_last_run_timestamp_seconds"] != nil || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range []string{"interlink_ip_reassembly_failures_total", "interlink_ip_fragments_created_total",
		"interlink_check_findings", "interlink_check_last_run_timestamp_seconds", "interlink_agent_sessions_active"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if v := fams["interlink_agent_sessions_total"].GetMetric()[0].GetCounter().GetValue(); v < 1 {
		t.Errorf("agent_sessions_total %v after a pmtu run", v)
	}
	if n := len(fams["interlink_check_findings"].GetMetric()); n < 10 {
		t.Errorf("%d findings series, want one per rule and severity", n)
	}
}

func TestAgentMetricsUsage(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("agent-metrics-test-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"agent", "--listen", "127.0.0.1:0", "--token-file", tok}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", "nonsense"}, `--metrics "nonsense": want HOST:PORT`},
		{[]string{"--metrics", "127.0.0.1"}, `--metrics "127.0.0.1": want HOST:PORT`},
		{[]string{"--metrics", "127.0.0.1:"}, `no port`},
		{[]string{"--metrics", "192.0.2.77:9472"}, `--metrics "192.0.2.77:9472": listen tcp`}, // not an address of this host
		{[]string{"--metrics", "127.0.0.1:0", "--check-interval", "1s"}, "--check-interval 1s: want 0 (no audit) or 10s to 24h"},
		{[]string{"--metrics", "127.0.0.1:0", "--check-interval", "-5m"}, "--check-interval -5m0s"},
		{[]string{"--check-interval", "1m"}, "--check-interval needs --metrics"},
		{[]string{"--metrics", "127.0.0.1:0", "--check-interval", "soon"}, `invalid argument "soon"`},
	} {
		code, stdout, stderr := runCLI(context.Background(), append(base, tc.args...)...)
		if code != ExitUnknown || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("agent %v: exit %d, stderr %q; want exit 3 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
