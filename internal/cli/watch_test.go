package cli

import (
	"context"
	"math"
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
	"github.com/interlink/interlink/internal/watch"
)

// Three agents on loopback and one dead node: the scraped metrics hold a
// path MTU, verdict and loss for every path between live agents, the dead
// agent down and its paths as problems, and handshake quantiles.
// Parallel: it waits for the second round.
func TestWatchMetrics(t *testing.T) {
	t.Parallel()
	lines := append(meshAgents(t, 61, 3), "dead 127.0.4.61:1")
	nodes, tok := meshFiles(t, lines)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr buftest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"watch", "--nodes", nodes, "--token-file", tok, "--metrics", "127.0.0.1:0",
			"--interval", "1s", "--max", "9000", "--expect", "9000", "--dashboard", "--wake-probe", "150ms"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("watch exit %d after cancel: %s", code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("watch did not stop 10s after cancel")
		}
	}()
	addrRE := regexp.MustCompile(`metrics on (http://\S+/metrics)`)
	var url string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s := stderr.String()
		if m := addrRE.FindStringSubmatch(s); m != nil && strings.Contains(s, "round 2:") {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second round after 30s:\n%s", s)
		}
	}
	checkDashboard(t, stdout.String())
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	checkDashboards(t, fams)
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			switch f.GetType() {
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue(), true
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue(), true
			}
			return 0, true
		}
		return 0, false
	}
	live := []string{"up61", "up62", "up63"}
	for _, a := range live {
		if v, ok := value("interlink_agent_up", map[string]string{"node": a}); !ok || v != 1 {
			t.Errorf("agent_up{%s} = %v (%v), want 1", a, v, ok)
		}
		for _, b := range live {
			if a == b {
				continue
			}
			l := map[string]string{"from": a, "to": b, "network": "1"}
			if v, ok := value("interlink_path_mtu_bytes", l); !ok || v != 9000 {
				t.Errorf("path_mtu_bytes %s->%s = %v (%v), want 9000", a, b, v, ok)
			}
			if v, ok := value("interlink_path_problem", l); !ok || v != 0 {
				t.Errorf("path_problem %s->%s = %v (%v), want 0", a, b, v, ok)
			}
			l["verdict"] = "ok"
			if v, ok := value("interlink_path_verdict", l); !ok || v != 1 {
				t.Errorf("path_verdict ok %s->%s = %v (%v)", a, b, v, ok)
			}
			if _, ok := value("interlink_path_probe_loss_ratio", l); !ok {
				t.Errorf("no path_probe_loss_ratio %s->%s", a, b)
			}
			checkRTT(t, fams["interlink_path_rtt_seconds"], a, b)
		}
	}
	// The wake-up probe: a share, the two ends' wake-ups and the round
	// trip of at least one live node (a probe the round's time cut short
	// leaves its node without them), none for the dead one.
	probed := 0
	for _, a := range live {
		share, ok := value("interlink_wake_share_ratio", map[string]string{"node": a})
		if !ok {
			continue
		}
		probed++
		rtt, _ := value("interlink_wake_probe_rtt_seconds", map[string]string{"node": a})
		req, okq := value("interlink_wake_seconds", map[string]string{"node": a, "end": "requester"})
		resp, okp := value("interlink_wake_seconds", map[string]string{"node": a, "end": "responder"})
		if share <= 0 || !okq || !okp || rtt <= 0 || rtt > 0.1 || math.Abs((req+resp)/rtt-share) > 1e-6 {
			t.Errorf("%s: wake share %v, wake-ups %v+%v s, round trip %v s: the share is not the two wake-ups over the round trip", a, share, req, resp, rtt)
		}
	}
	if probed == 0 {
		t.Errorf("no node has interlink_wake_share_ratio")
	}
	if _, ok := value("interlink_wake_share_ratio", map[string]string{"node": "dead"}); ok {
		t.Errorf("a wake-up share for a node whose agent is down")
	}
	if v, ok := value("interlink_agent_up", map[string]string{"node": "dead"}); !ok || v != 0 {
		t.Errorf("agent_up{dead} = %v (%v), want 0", v, ok)
	}
	if v, ok := value("interlink_path_problem", map[string]string{"from": "up61", "to": "dead"}); !ok || v != 1 {
		t.Errorf("path_problem up61->dead = %v (%v), want 1", v, ok)
	}
	if _, ok := value("interlink_path_mtu_bytes", map[string]string{"to": "dead"}); ok {
		t.Errorf("a path MTU for a path that was not measured")
	}
	if v, _ := value("interlink_mesh_rounds_total", nil); v < 2 {
		t.Errorf("mesh_rounds_total %v, want at least 2", v)
	}
	hs := fams["interlink_agent_handshake_seconds"]
	if hs == nil || len(hs.Metric) != 3 || hs.Metric[0].GetSummary().GetSampleCount() < 6 || len(hs.Metric[0].GetSummary().GetQuantile()) != 3 {
		t.Errorf("agent_handshake_seconds: %v", hs)
	}
	if q := hs.GetMetric()[0].GetSummary().GetQuantile(); len(q) == 3 && (q[0].GetValue() <= 0 || q[0].GetValue() > 1) {
		t.Errorf("median handshake %v s", q[0].GetValue())
	}
}

// checkRTT checks the path a -> b on network 1 has round-trip quantiles
// of the last round, positive, ordered and under 100 ms (loopback or veth),
// and counts of at least one probe.
func checkRTT(t *testing.T, f *dto.MetricFamily, a, b string) {
	t.Helper()
	if f == nil || f.GetType() != dto.MetricType_SUMMARY {
		t.Fatalf("interlink_path_rtt_seconds: %v", f)
	}
	for _, m := range f.Metric {
		l := map[string]string{}
		for _, lp := range m.Label {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["from"] != a || l["to"] != b || l["network"] != "1" {
			continue
		}
		s := m.GetSummary()
		qs := s.GetQuantile()
		if s.GetSampleCount() < 1 || s.GetSampleSum() <= 0 || len(qs) != 5 {
			t.Errorf("path_rtt_seconds %s->%s: count %d, sum %v, %d quantiles; want 5", a, b, s.GetSampleCount(), s.GetSampleSum(), len(qs))
			return
		}
		prev := 0.0
		for _, q := range qs {
			if v := q.GetValue(); v <= 0 || v > 0.1 || v < prev {
				t.Errorf("path_rtt_seconds %s->%s quantile %v = %v s: want positive, ordered, below 100 ms", a, b, q.GetQuantile(), v)
			} else {
				prev = v
			}
		}
		t.Logf("path_rtt_seconds %s->%s: %d probes, median %.3f ms, max %.3f ms", a, b, s.GetSampleCount(), qs[1].GetValue()*1e3, qs[4].GetValue()*1e3)
		return
	}
	t.Errorf("no path_rtt_seconds for %s->%s", a, b)
}

// checkDashboard checks the --dashboard text of the first rounds: the
// path MTU matrix with the dead node down, and the round-trip matrix with
// a figure for every live pair; not a terminal, so no escape sequences.
func checkDashboard(t *testing.T, out string) {
	t.Helper()
	t.Logf("dashboard:\n%s", out)
	first, _, _ := strings.Cut(out, "interlink watch: round 2")
	for _, want := range []string{"interlink watch: round 1 at ", "path MTU from row to column", "down!",
		"median round trip of the probes in ms, from row to column"} {
		if !strings.Contains(first, want) {
			t.Errorf("dashboard of round 1 lacks %q", want)
		}
	}
	if strings.Contains(out, "\033") {
		t.Errorf("escape sequences in a dashboard written to a file")
	}
	_, rtt, _ := strings.Cut(first, "median round trip")
	for _, row := range []string{"up61", "up62", "up63"} {
		line := ""
		for _, l := range strings.Split(rtt, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), row+" ") {
				line = l
			}
		}
		if n := len(regexp.MustCompile(`\b\d+\.\d\d\b`).FindAllString(line, -1)); n != 2 {
			t.Errorf("round-trip row %s has %d figures, want 2 (the other live nodes): %q", row, n, line)
		}
	}
}

func TestWatchUsage(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("t41-watch-usage-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", ":0", "--token-file", "/nonexistent"}, "token file"},
		{[]string{"--metrics", ":0"}, "--token-file FILE is required"},
		// Rounds are served as metrics: the flags of a command with one
		// result are refused, not taken and ignored.
		{[]string{"--metrics", ":0", "--save"}, "unknown flag: --save"},
		{[]string{"--metrics", ":0", "--save-as", "x"}, "unknown flag: --save-as"},
		{[]string{"--metrics", ":0", "--html", "x.html"}, "unknown flag: --html"},
		{[]string{"--metrics", ":0", "--label", "a=b"}, "unknown flag: --label"},
		{[]string{"--metrics", ":0", "--json"}, "unknown flag: --json"},
		{[]string{"--metrics", ":0", "--timeout", "5s"}, "unknown flag: --timeout"},
		// A wake-up probe shorter than a blocks interval, or one that
		// would take most of a round.
		{[]string{"--metrics", ":0", "--token-file", tok, "--wake-probe", "50ms"}, "--wake-probe 50ms: want 0 (off) or 100ms to half of --interval"},
		{[]string{"--metrics", ":0", "--token-file", tok, "--interval", "2s", "--wake-probe", "1500ms"}, "--wake-probe 1.5s"},
	} {
		code, stdout, stderr := runCLI(context.Background(), append([]string{"watch"}, tc.args...)...)
		if code != ExitUnknown || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("watch %v: exit %d, stderr %q; want exit 3 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A round that measured no path has no lowest path MTU: its stderr line
// says n/a, not 0; one that did names the path.
func TestWatchRoundLowest(t *testing.T) {
	for _, c := range []struct {
		r    watch.Round
		want string
	}{
		{watch.Round{N: 1, Unreachable: 3}, "lowest path MTU n/a,"},
		{watch.Round{N: 2, Paths: 2, LowestPathMTU: 1500, LowestPathMTUFrom: "a -> b"}, "lowest path MTU 1500 (a -> b),"},
	} {
		var out, errOut strings.Builder
		watchRound(&env{stdout: &out, stderr: &errOut}, &watchFlags{}, c.r)
		if !strings.Contains(errOut.String(), c.want) {
			t.Errorf("round %d: %q, want %q in it", c.r.N, errOut.String(), c.want)
		}
	}
}
