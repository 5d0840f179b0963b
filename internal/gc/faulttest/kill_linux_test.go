//go:build linux

// Package faulttest runs the gc coordinator (gc.Run, what `interlink bench
// --mode gc` calls) against real `interlink agent` processes on loopback
// and kills some of them before their results are collected (issue 34). It
// needs no root; run it with -race, as the coordinator's collect step is
// where agents failing at once raced.
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

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/testbin"
)

var bin string // the interlink binary the agents run

func TestMain(m *testing.M) {
	b, cleanup, err := testbin.Build("interlink-gcfault-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = b
	code := m.Run()
	cleanup()
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
	a.cmd = exec.Command(bin, "agent", "--listen", "127.0.0.1:0", "--token-file", tokenFile)
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

// TestKillTwoAgentsBeforeCollect runs four agents, kills two when the
// coordinator starts collecting: the run names those two as unreachable
// (their results lost during the run) and reports the other two whole.
func TestKillTwoAgentsBeforeCollect(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d"}
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
	if len(r.Unreachable) != 2 {
		t.Fatalf("unreachable: %+v, want c and d", r.Unreachable)
	}
	for i, want := range []string{"c", "d"} {
		u := r.Unreachable[i]
		if u.Node != want || u.Agent != agents[want].addr || !u.During || !strings.Contains(u.Cause, "connection closed during the run") {
			t.Errorf("unreachable %d: %+v, want %s at %s, during the run", i, u, want, agents[want].addr)
		}
		if line := "UNREACHABLE: " + want + " (" + agents[want].addr + "): connection closed during the run (the agent stopped?); its result was lost"; !strings.Contains(out.String(), line) {
			t.Errorf("text lacks %q", line)
		}
	}
	if len(r.Nodes) != 4 {
		t.Fatalf("%d nodes", len(r.Nodes))
	}
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
	for _, p := range r.Problems {
		if p.Problem == gc.ProblemAccounting {
			t.Errorf("%+v: the pairs miss what c and d routed, they cannot balance", p)
		}
	}
	if !strings.Contains(out.String(), "requested counts leave out the requests that c, d routed as masters (results lost)") {
		t.Error("the text does not say the requested counts are partial")
	}
	if r.Verdict != gc.VerdictFailed {
		t.Errorf("verdict %s, want failed (two nodes' results lost)", r.Verdict)
	}
}
