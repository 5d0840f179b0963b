//go:build linux

// Package faulttest runs the gc coordinator (gc.Run, what `interlink bench
// --mode gc` calls) against real `interlink agent` processes on loopback
// and kills some of them before their results are collected, and through
// `interlink bench --mode gc` against agents one of which answers with a
// result that does not fit the run (issue 34). It needs no root; run it
// with -race, as the coordinator's collect step is where agents failing at
// once raced.
package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/mesh"
)

// The interlink binary the agents run, built by the first test that
// needs it (with -short those tests skip and nothing is built: the two
// tests through cli.Main still run).
var (
	binOnce    sync.Once
	bin        string
	binErr     error
	binCleanup = func() {}
)

// interlinkBin returns the interlink binary, built once; with -short it
// skips the test, as other tests that run the binary as a process do.
func interlinkBin(t testing.TB) string {
	t.Helper()
	labuptest.SkipShort(t)
	binOnce.Do(func() { bin, binCleanup, binErr = bintest.Build("interlink-gcfault-") })
	if binErr != nil {
		t.Fatal(binErr)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	binCleanup()
	os.Exit(code)
}

const token = "gcfault-token-0123456789abcdef"

// agentProc is an `interlink agent` process on 127.0.0.1.
type agentProc struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
}

var listening = regexp.MustCompile(`listening on (\S+)`)

// startAgent starts an agent on a free loopback port and waits until it
// listens; the test's end kills it (by PID) if it still runs.
func startAgent(t *testing.T, tokenFile string) *agentProc {
	t.Helper()
	a := &agentProc{exited: make(chan struct{})}
	a.cmd = exec.Command(interlinkBin(t), "agent", "--listen", "127.0.0.1:0", "--token-file", tokenFile)
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			a.mu.Lock()
			fmt.Fprintln(&a.log, sc.Text())
			a.mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		a.cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		a.kill()
		if t.Failed() {
			a.mu.Lock()
			t.Logf("agent %s log:\n%s", a.addr, a.log.String())
			a.mu.Unlock()
		}
	})
	select {
	case a.addr = <-addr:
	case <-a.exited:
		t.Fatalf("agent exited before listening:\n%s", a.log.String())
	case <-time.After(10 * time.Second):
		t.Fatal("agent not listening after 10s")
	}
	return a
}

// kill ends the agent with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone (its sockets closed).
func (a *agentProc) kill() {
	a.cmd.Process.Kill()
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
	}
}

// startAgents starts an agent per name and returns them with their nodes.
func startAgents(t *testing.T, names ...string) (map[string]*agentProc, []mesh.Node) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	agents := map[string]*agentProc{}
	var nodes []mesh.Node
	for _, name := range names {
		a := startAgent(t, tok)
		agents[name] = a
		n, err := mesh.ParseNode(name + "=" + a.addr)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	if err := mesh.Check(nodes); err != nil {
		t.Fatal(err)
	}
	return agents, nodes
}

// TestKillTwoAgentsBeforeCollect runs four agents, kills two when the
// coordinator starts collecting: the run names those two as unreachable
// (their results lost during the run) and reports the other two whole.
func TestKillTwoAgentsBeforeCollect(t *testing.T) {
	agents, nodes := startAgents(t, "a", "b", "c", "d")
	killed := false
	opt := gc.Options{Token: []byte(token), Software: "gc fault test", Progress: func(s string) {
		if s == "collecting" && !killed {
			killed = true
			agents["c"].kill()
			agents["d"].kill()
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := gc.Run(ctx, nodes, gc.Spec{Duration: time.Second, Blocks: 1000, PingInterval: 50 * time.Millisecond}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	if !killed {
		t.Fatal("the run never reached its collect step")
	}
	checkLost(t, r, out.String(), agents, "c", "d")
	for _, nd := range r.Nodes {
		alive := nd.Name == "a" || nd.Name == "b"
		if alive && (nd.Error != "" || nd.Received == 0 || nd.Served == 0) || !alive && nd.Error != "no result collected" {
			t.Errorf("%s: error %q, received %d, served %d", nd.Name, nd.Error, nd.Received, nd.Served)
		}
	}
	for _, p := range r.Pairs {
		if p.Requester == "c" || p.Requester == "d" {
			t.Errorf("a pair of a node whose result was lost: %+v", p)
		}
		if (p.Server == "a" || p.Server == "b") && p.Received == 0 {
			t.Errorf("%s <- %s: nothing received", p.Requester, p.Server)
		}
	}
}

// checkLost holds a report whose nodes lost (in order) were killed before
// their results were collected: named unreachable in the JSON and the
// text, the pairs not judged on balance, the run failed.
func checkLost(t *testing.T, r *gc.Report, text string, agents map[string]*agentProc, lost ...string) {
	t.Helper()
	if len(r.Unreachable) != len(lost) || len(r.Nodes) != len(agents) {
		t.Fatalf("%d nodes, unreachable: %+v, want %v", len(r.Nodes), r.Unreachable, lost)
	}
	for i, want := range lost {
		u := r.Unreachable[i]
		if u.Node != want || u.Agent != agents[want].addr || !u.During || !strings.Contains(u.Cause, "connection closed during the run") {
			t.Errorf("unreachable %d: %+v, want %s at %s, during the run", i, u, want, agents[want].addr)
		}
		if line := "UNREACHABLE: " + want + " (" + agents[want].addr + "): connection closed during the run (the agent stopped?); its result was lost"; !strings.Contains(text, line) {
			t.Errorf("text lacks %q", line)
		}
	}
	for _, p := range r.Problems {
		if p.Problem == gc.ProblemAccounting {
			t.Errorf("%+v: the pairs miss what %v routed, they cannot balance", p, lost)
		}
	}
	if note := "requested counts leave out the requests that " + strings.Join(lost, ", ") + " routed as masters (results lost)"; !strings.Contains(text, note) {
		t.Errorf("the text does not say the requested counts are partial (%q)", note)
	}
	if r.Verdict != gc.VerdictFailed {
		t.Errorf("verdict %s, want failed (results lost)", r.Verdict)
	}
}
