package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/wire"
)

// benchAgent runs an agent on loopback and returns its address and a token
// file for it.
func benchAgent(t *testing.T) (addr, tokenFile string) {
	t.Helper()
	tok := []byte("t5-cli-bench-token-0123456789abcdef")
	tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	return agenttest.Start(t, agent.Config{Token: tok, Limits: wire.Limits{MaxRateBitsPerSec: 20e9}, Software: "t5 cli test"}), tokenFile
}

func runCLI(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

func TestBenchUsage(t *testing.T) {
	_, tok := benchAgent(t)
	for _, args := range [][]string{
		{"bench"},
		{"bench", "127.0.0.1", "--mode", "ping", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp"},
		{"bench", "127.0.0.1", "--mode", "udp", "--len", "8X", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp", "--len", "70000", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp", "--len", "64", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp", "--bidir", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--block", "2M", "--token-file", tok},
		{"bench", "127.0.0.1", "--time", "2h", "--token-file", tok},
		{"bench", "127.0.0.1", "--rate", "fast", "--mode", "udp", "--token-file", tok},
		{"bench", "127.0.0.1", "--token-file", filepath.Join(t.TempDir(), "missing")},
	} {
		code, out, errOut := runCLI(context.Background(), args...)
		if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "interlink: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestBenchAgainstAgent(t *testing.T) {
	addr, tok := benchAgent(t)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "1s", "--interval", "500ms", "--outstanding", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"[fwd]   0.00-0.50", "round trip: min", "fragments per message", "cpu agent  responder", "cpu client requester"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "100M", "--time", "1s")
	if code != ExitOK || !strings.Contains(out, "agent (receiver):\n[fwd]   0.00-") || !strings.Contains(out, "jitter") {
		t.Errorf("udp: exit %d, no agent receiver lines:\n%s%s", code, out, errOut)
	}
	page := filepath.Join(t.TempDir(), "bench.html")
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "100M", "--time", "1s", "--json", "--html", page)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `class="chart timeseries bench-rate"`) {
		t.Errorf("--html: %v, no rate chart", err)
	}
	var rep struct {
		Schema string `json:"schema"`
		Flows  []struct {
			Client, Server struct {
				Role      string                   `json:"role"`
				Intervals []json.RawMessage        `json:"intervals"`
				CPU       struct{ SystemNs int64 } `json:"cpu"`
			}
			Summary struct {
				BitsPerSec float64 `json:"bits_per_sec"`
				Sent       int64   `json:"sent"`
				Lost       int64   `json:"lost"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	f := rep.Flows[0]
	if rep.Schema != "interlink.bench/v1" || f.Client.Role != "sender" || f.Server.Role != "receiver" ||
		len(f.Client.Intervals) == 0 || len(f.Server.Intervals) == 0 || f.Summary.Sent == 0 ||
		f.Summary.BitsPerSec < 95e6 || f.Summary.BitsPerSec > 105e6 {
		t.Errorf("report: %+v", rep)
	}
}

func TestBenchInterrupted(t *testing.T) {
	addr, tok := benchAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	t0 := time.Now()
	code, out, _ := runCLI(ctx, "bench", addr, "--token-file", tok, "--mode", "tcp", "--time", "30s", "--interval", "200ms")
	if time.Since(t0) > 5*time.Second || code != ExitUnknown || !strings.Contains(out, "interrupted") || !strings.Contains(out, "forward:") {
		t.Errorf("after Ctrl-C: exit %d in %v:\n%s", code, time.Since(t0), out)
	}
}

// TestBenchFlagsBeforeConnecting: zero and negative values are errors, not
// defaults, and each is refused before anything connects (the peer here
// does not exist: a connection attempt would say so instead).
func TestBenchFlagsBeforeConnecting(t *testing.T) {
	_, tok := benchAgent(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "blocks", "--block", "0"}, "--block 0: want a positive size"},
		{[]string{"--mode", "blocks", "--request", "0"}, "--request 0: want a positive size"},
		{[]string{"--mode", "udp", "--len", "0"}, "--len 0: want a positive size"},
		{[]string{"--mode", "blocks", "--outstanding", "0"}, "--parallel and --outstanding want 1 or more"},
		{[]string{"--parallel", "0"}, "--parallel and --outstanding want 1 or more"},
		{[]string{"--link-overhead", "-100"}, "--link-overhead -100"},
		{[]string{"--cpu", "999"}, "--cpu 999: this node has CPUs 0 to"},
		{[]string{"--peer-cpu", "-2"}, "--peer-cpu -2"},
	} {
		args := append([]string{"bench", "127.0.0.1:1", "--token-file", tok}, tc.args...)
		code, out, errOut := runCLI(context.Background(), args...)
		if code != ExitUnknown || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}
