package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
)

// gcAgents starts n agents on loopback with one token and returns the node
// arguments (NAME=ADDR) and the token file.
func gcAgents(t *testing.T, n int) (nodes []string, tokenFile string) {
	t.Helper()
	tok := []byte("t23-cli-gc-token-0123456789abcdef")
	tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		addr := agenttest.Start(t, agent.Config{Token: tok, Software: "t23 cli test"})
		nodes = append(nodes, fmt.Sprintf("node%d=%s", i+1, addr))
	}
	return nodes, tokenFile
}

func TestBenchGCUsage(t *testing.T) {
	nodes, tok := gcAgents(t, 2)
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("t23-not-the-agents-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	var many []string
	for i := 0; i < 17; i++ {
		many = append(many, fmt.Sprintf("n%d=127.0.0.1:%d", i, 1000+i))
	}
	gc := func(extra ...string) []string {
		return append(append([]string{"bench", "--mode", "gc", "--token-file", tok, "--time", "300ms"}, nodes...), extra...)
	}
	for _, args := range [][]string{
		gc("--block", "2M"),
		gc("--block", "1025K"),
		gc("--request", "10"),
		gc("--skew", "steep"),
		gc("--skew", "9"),
		gc("--current-share", "1.5"),
		gc("--blocks", "0"),
		gc("--outstanding", "0"),
		gc("--len", "8K"),
		gc("--cpu", "0"),
		gc("--interval", "2s"),
		gc("--ping-interval", "1ms"),
		gc("--rate", "1gbit"),
		gc("--rate", "0"),
		gc("--nodes", "/nonexistent"),
		{"bench", "--mode", "gc", "--token-file", tok, nodes[0]},
		append([]string{"bench", "--mode", "gc", "--token-file", tok}, many...),
		append([]string{"bench", "--mode", "gc"}, nodes...),
		{"bench", "127.0.0.1", "--mode", "blocks", "--blocks", "100", "--token-file", tok},
		{"bench", "127.0.0.1", "--mode", "tcp", "--skew", "zipf", "--token-file", tok},
		// A wrong token: one line, exit 3, nothing measured.
		append([]string{"bench", "--mode", "gc", "--token-file", bad, "--time", "300ms"}, nodes...),
	} {
		code, out, errOut := runCLI(context.Background(), args...)
		if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "interlink: bench: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[3:], code, out, errOut)
		}
	}
	// The line names the one flag that is wrong (it listed three).
	for flag, want := range map[string]string{"--blocks": "bench: --blocks 0: want more than 0",
		"--outstanding": "bench: --outstanding 0: want more than 0"} {
		if _, _, errOut := runCLI(context.Background(), gc(flag, "0")...); !strings.Contains(errOut, want) {
			t.Errorf("%s 0: stderr %q, want %q", flag, errOut, want)
		}
	}
}

// TestBenchGC runs the command against agents on loopback: text with the
// AWR tables, JSON with its schema, and a named node without an agent
// (exit 3, the others measured).
func TestBenchGC(t *testing.T) {
	t.Parallel() // it waits on two short runs and judges no figure against the clock
	nodes, tok := gcAgents(t, 3)
	page, db := filepath.Join(t.TempDir(), "gc.html"), filepath.Join(t.TempDir(), "history.db")
	args := append([]string{"bench", "--mode", "gc", "--token-file", tok, "--time", "400ms", "--blocks", "2000", "--html", page, "--save", "--db", db}, nodes...)
	code, out, errOut := runCLI(context.Background(), args...)
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `class="chart heatmap gc-rate"`) {
		t.Errorf("--html: %v, no heatmap of blocks per second", err)
	}
	// stderr holds the one line of --save, nothing else.
	if !strings.HasPrefix(errOut, "interlink: saved bench result") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("--save: stderr %q", errOut)
	}
	t.Logf("%s", out)
	for _, want := range []string{"interlink bench --mode gc: 3 nodes", "Block transfers, requester <- server", "gc cr block 2-way",
		"Interconnect Ping Latency Stats", "verdict: "} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	if code > ExitWarning {
		t.Errorf("exit %d", code)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	args = append([]string{"bench", "--mode", "gc", "--token-file", tok, "--time", "300ms", "--json", "--skew", "zipf"}, nodes[:2]...)
	code, out, _ = runCLI(context.Background(), append(args, "gone="+dead)...)
	var doc struct {
		Schema      string `json:"schema"`
		Spec        struct{ Skew float64 }
		Unreachable []struct{ Node, Cause string }
		Pairs       []struct {
			Requester, Server         string
			Requested, Received, Lost int64
			Balanced                  bool
		}
		Total struct {
			BlocksPerSec float64 `json:"blocks_per_sec"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if code != ExitUnknown || doc.Schema != "interlink.gc/v1" || doc.Spec.Skew != 1 || len(doc.Unreachable) != 1 || doc.Unreachable[0].Node != "gone" ||
		len(doc.Pairs) != 2 || doc.Total.BlocksPerSec <= 0 {
		t.Errorf("exit %d, %+v", code, doc)
	}
	for _, p := range doc.Pairs {
		if !p.Balanced || p.Received == 0 {
			t.Errorf("%+v", p)
		}
	}
}
