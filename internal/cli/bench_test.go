package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/wire"
)

// benchAgent runs an agent on loopback and returns its address and a token
// file for it.
func benchAgent(t *testing.T) (addr, tokenFile string) {
	t.Helper()
	return benchAgentRate(t, 0)
}

// benchAgentRate is benchAgent with a send limit (0: the agent's default).
func benchAgentRate(t *testing.T, maxRate float64) (addr, tokenFile string) {
	t.Helper()
	tok := []byte("t5-cli-bench-token-0123456789abcdef")
	tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	return agenttest.Start(t, agent.Config{Token: tok, Limits: wire.Limits{MaxRateBitsPerSec: maxRate}, Software: "t5 cli test"}), tokenFile
}

func runCLI(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

func TestBenchUsage(t *testing.T) {
	_, tok := benchAgent(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		// --html onto a FIFO or device: the report is renamed over the
		// path, which replaced the FIFO (and as root /dev/stdout).
		{"bench", "127.0.0.1", "--html", fifo, "--token-file", tok},
		{"bench", "127.0.0.1", "--html", "/dev/null", "--token-file", tok},
		// An empty --save-as ran and saved nothing.
		{"bench", "127.0.0.1", "--save-as", "", "--token-file", tok},
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
		// Bytes are not bits: 1GB was read as 1 Gbit/s.
		{"bench", "127.0.0.1", "--rate", "1GB", "--mode", "udp", "--token-file", tok},
		{"bench", "127.0.0.1", "--link-rate", "10GB/s", "--token-file", tok},
		{"bench", "127.0.0.1", "--token-file", filepath.Join(t.TempDir(), "missing")},
		// Zero is an error, not "the default"; out-of-range values and
		// flags of another mode are refused before anything connects.
		{"bench", "127.0.0.1", "--mode", "blocks", "--block", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--request", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--outstanding", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp", "--len", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "tcp", "--len", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--parallel", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--interval", "0s", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--timeout", "0s", "--token-file", tok},
		{"bench", "127.0.0.1", "--link-overhead", "-100", "--token-file", tok},
		{"bench", "127.0.0.1", "--cpu", "999", "--token-file", tok},
		{"bench", "127.0.0.1", "--cpu", "-2", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "tcp", "--rate", "1G", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "udp", "--outstanding", "4", "--token-file", tok},
		// blocks: --rate is requests per second, more than 0.
		{"bench", "127.0.0.1", "--mode", "blocks", "--rate", "0", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--rate", "1gbit", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--rate", "-5", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--rate", "NaN", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "blocks", "--rate", "1e12", "--token-file", tok},
		// A PM QoS request is whole microseconds, 0 or more.
		{"bench", "127.0.0.1", "--cpu-latency", "-1", "--token-file", tok},
		{"bench", "127.0.0.1", "--cpu-latency", "abc", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "gc", "--cpu-latency", "1.5", "--token-file", tok},
	} {
		code, out, errOut := runCLI(context.Background(), args...)
		if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "interlink: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestBenchBlocksPaced: --rate in blocks mode sends that many requests a
// second, each alone (sockperf's --mps), and says so.
func TestBenchBlocksPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1 s of paced requests judged against the clock")
	}
	addr, tok := benchAgent(t)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "1s", "--rate", "50", "--outstanding", "4", "--json", "--self-test=false")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Spec struct {
			RequestsPerSec float64 `json:"requests_per_sec"`
		} `json:"spec"`
		Flows []struct {
			Client struct {
				Blocks *struct {
					Requests int64 `json:"requests"`
				} `json:"blocks"`
			} `json:"client"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Flows) == 0 || r.Flows[0].Client.Blocks == nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// 1 s at 50 a second: at most 51 requests (with the one due at the
	// end), whatever --outstanding allows; fewer when the loop woke late
	// (a late request does not make the next one early), as on a machine
	// busy with other tests, but of the order of 50, not the thousands a
	// loopback round trip allows.
	if n := r.Flows[0].Client.Blocks.Requests; r.Spec.RequestsPerSec != 50 || n < 20 || n > 51 {
		t.Errorf("spec %v requests/s, %d requests sent in 1 s", r.Spec.RequestsPerSec, n)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "100ms", "--rate", "20", "--self-test=false")
	if code != ExitOK || !strings.Contains(out, "1 outstanding, paced to 20 requests/s") {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
}

// TestBenchAgainstAgent: a blocks run's text has its intervals, round
// trips, CPU and the tool's floor; a udp run's text the agent's receiver
// lines; a paced udp run's rate comes through the CLI into the JSON and the
// HTML. Not parallel: intervals and rate are judged against the clock.
func TestBenchAgainstAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs paced against the clock, 2.8 s")
	}
	addr, tok := benchAgent(t)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "600ms", "--interval", "300ms", "--outstanding", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`\[fwd\]   0\.00-0\.3\d`).MatchString(out) {
		t.Errorf("no first interval ending near 0.30 s (a loaded machine may close it a few ms late):\n%s", out)
	}
	for _, want := range []string{"round trip: min", "fragments per message", "cpu agent  responder", "cpu client requester",
		"loopback self-test: the same blocks in this process over 127.0.0.1: round trip p50 ",
		"round trip split (p50 / p90 / p99)", "requester wake-up", "network and stacks (both ways)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The agent's receiver lines and jitter, from a udp run before the one
	// whose rate is judged, the order this test always had: with the rate
	// run straight after the blocks run (and its self-test), it fell behind
	// twice in full package runs on a loaded machine (68 and 74 Mbit/s).
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "100M", "--time", "300ms")
	if !okOrSenderLate(code, out) || !strings.Contains(out, "agent (receiver):\n[fwd]   0.00-") || !strings.Contains(out, "jitter") {
		t.Errorf("udp: exit %d, no agent receiver lines:\n%s%s", code, out, errOut)
	}
	page := filepath.Join(t.TempDir(), "bench.html")
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "100M", "--time", "1s", "--json", "--html", page)
	if !okOrSenderLate(code, out) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `class="chart timeseries bench-rate"`) {
		t.Errorf("--html: %v, no rate chart", err)
	}
	checkUDPReport(t, out)
}

// checkUDPReport checks the JSON of a 1 s udp run paced to 100 Mbit/s.
func checkUDPReport(t *testing.T, out string) {
	t.Helper()
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
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Flows) == 0 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	f := rep.Flows[0]
	if rep.Schema != "interlink.bench/v1" || f.Client.Role != "sender" || f.Server.Role != "receiver" ||
		len(f.Client.Intervals) == 0 || len(f.Server.Intervals) == 0 || f.Summary.Sent == 0 ||
		f.Summary.BitsPerSec < 85e6 || f.Summary.BitsPerSec > 105e6 {
		// The rate comes through the CLI and the JSON whole; how closely the
		// pacer keeps it is traffic's TestLoopbackUDPPaced's to judge. A
		// 1 s run on a loaded 2-core machine fell 7.5 % behind (never
		// ahead: the pacer does not catch up in bursts), hence 85 here.
		t.Errorf("report: %+v", rep)
	}
}

// TestBenchSelfTest: the tool's floor is in the JSON of a blocks run, and
// left out on request. Parallel: it waits on runs of fixed length and
// judges none of their figures against the clock.
func TestBenchSelfTest(t *testing.T) {
	t.Parallel()
	addr, tok := benchAgent(t)
	for _, on := range []bool{true, false} {
		code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "100ms", "--json", fmt.Sprintf("--self-test=%v", on))
		var st struct {
			SelfTest *struct {
				PerSec float64 `json:"per_sec"`
				RTT    *struct {
					P50 int64 `json:"p50_ns"`
				} `json:"rtt"`
			} `json:"self_test"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || code != ExitOK {
			t.Fatalf("self-test %v: exit %d, %v: %s", on, code, err, errOut)
		}
		if on != (st.SelfTest != nil) || on && (st.SelfTest.RTT == nil || st.SelfTest.RTT.P50 <= 0 || st.SelfTest.PerSec <= 0) {
			t.Errorf("--self-test=%v: %+v", on, st.SelfTest)
		}
	}
}

// TestBenchInterrupted: Ctrl-C ends a run at once, with what was measured.
// Parallel: it waits out the 0.7 s before the cancel, and its bound (5 s
// for a cancelled 30 s run) leaves room for a loaded machine.
func TestBenchInterrupted(t *testing.T) {
	t.Parallel()
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
		{[]string{"--mode", "blocks", "--block", "0"}, "--block 0: want at least 1 byte"},
		{[]string{"--mode", "blocks", "--request", "0"}, "--request 0: want at least 1 byte"},
		{[]string{"--mode", "udp", "--len", "0"}, "--len 0: want at least 1 byte"},
		{[]string{"--mode", "blocks", "--outstanding", "0"}, "--outstanding 0: want 1 to"},
		{[]string{"--parallel", "0"}, "--parallel 0: want 1 to"},
		{[]string{"--link-overhead", "-100"}, "--link-overhead -100: want 0 to 200"},
		{[]string{"--cpu", "999"}, "--cpu: cpu 999: this process may run on"},
		{[]string{"--peer-cpu", "-2"}, "--peer-cpu -2: want a CPU number"},
		{[]string{"--mode", "udp", "--flow=false"}, "--flow is for unpaced udp (--rate 0)"},
		{[]string{"--mode", "udp", "--rate", "1g", "--flow=false"}, "--flow is for unpaced udp (--rate 0)"},
		{[]string{"--mode", "tcp", "--flow=false"}, "--flow does nothing in --mode tcp"},
	} {
		args := append([]string{"bench", "127.0.0.1:1", "--token-file", tok}, tc.args...)
		code, out, errOut := runCLI(context.Background(), args...)
		if code != ExitUnknown || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// okOrSenderLate: a paced run exits 0, or 1 limited by its own sender
// alone when other tests took its CPU (traffic.LimitSenderLate).
func okOrSenderLate(code int, out string) bool {
	return code == ExitOK || code == ExitWarning && strings.Contains(out, traffic.LimitSenderLate) && !strings.Contains(out, "agent-")
}

// TestBenchLimited: a run the agent's send limit held back exits 1 with a
// warning, paced round trips and limited_by in JSON; a run under the limit
// exits 0 without them. Not parallel, and the run under the limit lasts
// 1 s: the agent calls a run limited once it waited over 1 % of it, and a
// stall of the agent's sender on a loaded machine has made a 5 Mbit/s run
// under a 20 Mbit/s limit wait that long (1 s run, load ~10). The runs
// above the limit wait most of the time, and 300 ms shows it as well.
func TestBenchLimited(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs held by a rate limit, judged against the clock, 2.2 s")
	}
	addr, tok := benchAgentRate(t, 20e6)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "300ms", "--outstanding", "4", "--self-test=false")
	if code != ExitWarning || !strings.Contains(out, "WARNING: limited by agent-rate: the agent's send limit of 20.0 Mbit/s") ||
		!strings.Contains(out, "(PACED by the agent's send limit") {
		t.Errorf("blocks above the agent's limit: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--reverse", "--rate", "40M", "--time", "300ms", "--json")
	var rep struct {
		LimitedBy []struct{ Limit, Detail string } `json:"limited_by"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitWarning || len(rep.LimitedBy) != 1 || rep.LimitedBy[0].Limit != "agent-rate" {
		t.Errorf("reverse udp above the limit: exit %d, %v, %+v:\n%s%s", code, err, rep, out, errOut)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--reverse", "--rate", "5M", "--time", "1s")
	if !okOrSenderLate(code, out) || strings.Contains(out, "limited by agent") {
		t.Errorf("reverse udp under the limit: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestBenchUDPFlow: unpaced UDP is flow-controlled by default, and the
// result names the bottleneck in text and JSON; --flow=false blasts.
// Parallel: which end is the bottleneck is named, never judged.
func TestBenchUDPFlow(t *testing.T) {
	t.Parallel()
	addr, tok := benchAgent(t)
	code, out, errOut := runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "0", "--time", "100ms")
	if code != ExitOK || !strings.Contains(out, "unpaced, flow-controlled by the receiver") ||
		!regexp.MustCompile(`flow control: window \d+ datagrams \(from the receiver's 8.00 MiB socket buffer\), \d+ feedback, \d+ probes; the sender waited on the window [0-9.]+ % of the run: the (receiver|sender) was the bottleneck`).MatchString(out) {
		t.Errorf("unpaced udp: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "0", "--time", "100ms", "--json")
	var rep struct {
		Spec struct {
			NoFlow bool `json:"no_flow"`
		}
		Flows []struct {
			Summary struct {
				Flow *struct {
					Window     int     `json:"window"`
					Wait       float64 `json:"window_wait_percent"`
					Bottleneck string  `json:"bottleneck"`
				} `json:"flow"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitOK || rep.Flows[0].Summary.Flow == nil ||
		rep.Flows[0].Summary.Flow.Window == 0 || rep.Flows[0].Summary.Flow.Bottleneck == "" {
		t.Errorf("unpaced udp --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	code, out, errOut = runCLI(context.Background(), "bench", addr, "--token-file", tok, "--mode", "udp", "--rate", "0", "--flow=false", "--time", "100ms")
	if code != ExitOK || !strings.Contains(out, "unpaced, no flow control") || strings.Contains(out, "flow control: window") {
		t.Errorf("--flow=false: exit %d:\n%s%s", code, out, errOut)
	}
}
