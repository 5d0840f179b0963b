package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/buftest"
)

// Item 7 of issue 18: --peer-cpu 999 dropped the stream mid-run, printed
// half a report and a raw "broken pipe", and the agent logged nothing.
// Now the agent refuses the run, says why in its log, and the client
// prints that one line and exits 3 before any report.
func TestBenchPeerCPURefusedByAgent(t *testing.T) {
	tok := []byte("t5-cli-peercpu-token-0123456789abcdef")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, tok, 0o600); err != nil {
		t.Fatal(err)
	}
	log := &buftest.Buffer{}
	addr := agenttest.Start(t, agent.Config{Token: tok, Software: "t5 cli test", Log: log})
	for _, mode := range []string{"tcp", "blocks"} {
		var o, e bytes.Buffer
		code := Main(context.Background(), []string{"bench", addr, "--token-file", tokenFile, "--mode", mode, "--time", "1s", "--peer-cpu", "999"}, &o, &e)
		if code != ExitUnknown || o.Len() != 0 || strings.Count(e.String(), "\n") != 1 ||
			!strings.Contains(e.String(), "--peer-cpu: cpu 999 is not available on this agent (it may use CPUs ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", mode, code, o.String(), e.String())
		}
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "bench.open failed: --peer-cpu: cpu 999 is not available"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agent log has no reason:\n%s", log)
		}
	}
}
