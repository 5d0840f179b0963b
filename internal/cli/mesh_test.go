package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/mesh"
)

const meshTestToken = "cli-mesh-token-0123456789"

// meshAgents serves agents on 127.0.0.first ... first+n-1 until the test
// ends and returns "NAME AGENT" lines for a nodes file.
func meshAgents(t *testing.T, first, n int) []string {
	t.Helper()
	var lines []string
	for i := first; i < first+n; i++ {
		addr := agenttest.StartOn(t, fmt.Sprintf("127.0.0.%d:0", i), agent.Config{Token: []byte(meshTestToken)})
		lines = append(lines, fmt.Sprintf("up%d %s", i, addr))
	}
	return lines
}

func meshFiles(t *testing.T, lines []string) (nodes, token string) {
	dir := t.TempDir()
	nodes, token = filepath.Join(dir, "nodes"), filepath.Join(dir, "token")
	if err := os.WriteFile(nodes, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(token, []byte(meshTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return nodes, token
}

// A mesh too large for a matrix, half of it dead: each dead node named
// once, a per-node summary instead of the matrix, a bounded report.
func TestMeshLargeSummary(t *testing.T) {
	t.Parallel() // its agents' addresses (127.0.0.21-32) are its own
	lines := meshAgents(t, 21, 12)
	var dead []string
	for i := 1; i <= 12; i++ {
		dead = append(dead, fmt.Sprintf("dead%d", i))
		lines = append(lines, fmt.Sprintf("dead%d 127.0.4.%d:1", i, i)) // nothing listens there
	}
	nodes, tok := meshFiles(t, lines)
	out, errOut, code := mainOutput("mesh", "--nodes", nodes, "--token-file", tok, "--max", "9000", "--expect", "9000")
	if code != ExitWarning || errOut != "" {
		t.Errorf("exit %d, stderr %q; want 1 and nothing (a pipe gets no progress)", code, errOut)
	}
	if n := strings.Count(out, "\n"); n > 20 {
		t.Errorf("%d lines for 24 nodes:\n%s", n, out)
	}
	for _, want := range []string{"552 paths,", "slowest node up", "132 measured, 0 failed, 420 not tried",
		"unreachable agents: 12 of 24 nodes", "connection refused (no agent listening) (12):",
		"12 of 12 reachable nodes: every measured path ok (lowest path MTU 9000)", "no problem paths among those tried"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, d := range dead {
		if strings.Count(strings.ReplaceAll(out, "\n", " ")+" ", " "+d+" ") != 1 {
			t.Errorf("%s not listed exactly once:\n%s", d, out)
		}
	}
	if strings.Contains(out, "from \\ to") {
		t.Errorf("a matrix for 24 nodes:\n%s", out)
	}
	out, _, _ = mainOutput("mesh", "--nodes", nodes, "--token-file", tok, "--max", "9000", "--json")
	var r mesh.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Unreachable) != 12 || len(r.Paths) != 552 || r.Stopped != "" {
		t.Errorf("json: %v, %d unreachable, %d paths, stopped %q", err, len(r.Unreachable), len(r.Paths), r.Stopped)
	}
}

// --timeout bounds the run: an agent that accepts and never answers holds
// the contact for 5 s, a 300 ms timeout cuts it, and the report says what
// was not measured, with exit 3. Parallel: it waits out the timeout, and
// its bound (4 s) leaves room for a loaded machine.
func TestMeshTimeout(t *testing.T) {
	t.Parallel()
	lines := meshAgents(t, 41, 2)
	ln, err := net.Listen("tcp", "127.0.0.43:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	lines = append(lines, "silent "+ln.Addr().String())
	nodes, tok := meshFiles(t, lines)
	out, errOut, code := mainOutput("mesh", "--nodes", nodes, "--token-file", tok, "--max", "9000", "--timeout", "300ms")
	if code != ExitUnknown || !strings.Contains(errOut, "stopped early (--timeout 300ms reached): 6 of 6 paths not measured") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "STOPPED EARLY: --timeout 300ms reached; 6 paths not measured") || strings.Count(out, "n/m") != 6+2 {
		t.Errorf("report:\n%s", out)
	}
}
