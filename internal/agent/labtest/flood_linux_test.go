//go:build linux

// Package labtest attacks a real `interlink agent` process in a
// network-namespace lab (issue 18, items 1 and 2): a flooding client in one
// node, a legitimate client in another, so they are different source
// addresses, and the agent's memory, descriptors and log measured from
// outside. It builds labs: run it under the lab lock.
package labtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labuptest"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	// Before the build: with -short the binary was built (10-15 s here)
	// for a test that then skipped.
	labuptest.ShortMain("agent lab tests")
	if err := lab.CheckPrivilege(); err != nil {
		fmt.Fprintf(os.Stderr, "agent lab tests build network namespaces and need root: %v\n", err)
		os.Exit(1)
	}
	var cleanup func()
	var err error
	if bin, cleanup, err = bintest.Build("t18-interlink-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const topo = `
name: t18-flood
switches:
  ic: {mtu: 9000}
nodes:
  agent:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.18.1/24]}
  flooder:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.18.2/24]}
  client:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.18.3/24]}
`

const token = "t18-lab-token-0123456789abcdef"

type syncBuf = labuptest.Log

// usage is what the agent process holds: open descriptors and resident
// memory.
type usage struct {
	fds   int
	rssKB int
}

func (u usage) String() string { return fmt.Sprintf("%d fds, %d KiB RSS", u.fds, u.rssKB) }

func measure(t *testing.T, pid int) usage {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	u := usage{fds: len(ents)}
	for _, l := range strings.Split(string(st), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			u.rssKB, _ = strconv.Atoi(f[1])
		}
	}
	return u
}

// startAgent runs `interlink agent` in n with its default limits and
// returns its PID and log; it is killed by PID when the test ends.
func startAgent(t *testing.T, n *lab.Node, tokFile string) (int, *syncBuf) {
	t.Helper()
	log, pid := labuptest.Daemon(t, n, exec.Command(bin, "agent", "--listen", "198.18.18.1", "--token-file", tokFile), "agent", "listening on")
	return pid, log
}

// run runs interlink with args in n (at most 60 s) and returns its output
// and exit code.
func run(t *testing.T, n *lab.Node, args ...string) (string, int, time.Duration) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	if err := n.Start(cmd); err != nil {
		t.Fatalf("start interlink %v: %v", args, err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("interlink %v: %v", args, err)
	}
	return out.String(), code, time.Since(t0)
}

// waitSummary waits for a line after the first `from` lines of log that
// summarizes unauthenticated peers (one comes every 10 s; the 60 s bound
// is only against a hang).
func waitSummary(t *testing.T, log *syncBuf, from int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if lines := strings.Split(log.String(), "\n"); len(lines) > from && strings.Contains(strings.Join(lines[from:], "\n"), "unauthenticated peers: ") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("never a summary of unauthenticated peers in the agent log after the garbage flood")
			return
		}
	}
}

func TestAgentUnderFlood(t *testing.T) {
	tp, err := lab.Parse("t18-flood.yaml", []byte(topo))
	if err != nil {
		t.Fatal(err)
	}
	l := labuptest.Up(t, tp)
	an, fl, cl := labuptest.Node(t, l, "agent"), labuptest.Node(t, l, "flooder"), labuptest.Node(t, l, "client")
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid, log := startAgent(t, an, tokFile)
	base := measure(t, pid)
	const target = "198.18.18.1:7471"

	// 500 idle connections from the flooder, held for the whole test.
	const idle = 500
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	err = fl.Do(func() error {
		d := net.Dialer{Timeout: 2 * time.Second}
		for range idle {
			c, err := d.Dial("tcp", target)
			if err != nil {
				return fmt.Errorf("idle connection %d: %w", len(held), err)
			}
			held = append(held, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitAccepted(t, an, 7471) // the agent has accepted them all
	flood := measure(t, pid)

	// A legitimate client in another node: pmtu succeeds (a flood that
	// took every slot would have it refused).
	out, code, took := run(t, cl, "pmtu", "198.18.18.1", "--token-file", tokFile)
	if code != 0 {
		t.Fatalf("pmtu from another address during the flood: exit %d after %v\n%s\nagent log:\n%s", code, took, out, log)
	}
	during := measure(t, pid)
	t.Logf("client$ interlink pmtu 198.18.18.1 (exit 0 in %v)\n%s", took.Round(time.Millisecond), out)

	// A client sharing the flooder's address is told why.
	err = fl.Do(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := agent.Dial(ctx, "198.18.18.1", []byte(token), agent.DialOptions{})
		return err
	})
	if !errors.Is(err, agent.ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf("agent busy: %d pending handshakes from your address", agent.DefaultMaxPendingPerSource)) {
		t.Fatalf("client from the flooding address: %v", err)
	}
	t.Logf("agent before the flood: %v; with %d idle connections held: %v; after pmtu from another node (%v): %v",
		base, idle, flood, took.Round(time.Millisecond), during)
	// Bounded: the admitted handshakes, the refusals being drained, and
	// the sessions, whatever the flood's size.
	for _, u := range []usage{flood, during} {
		if u.fds > base.fds+agent.DefaultMaxPendingPerSource+32+8 || u.rssKB > base.rssKB+32<<10 {
			t.Errorf("agent usage under flood not bounded: %v (before: %v)", u, base)
		}
	}

	// 10,000 garbage connections from the flooder, once every idle one
	// has had its answer (those over the cap a refusal at once, those
	// admitted one at the handshake deadline): the log stays short.
	answered := make(chan struct{}, idle)
	for _, c := range held {
		go func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Minute)) // only against a hang
			c.Read(make([]byte, 512))
			answered <- struct{}{}
		}()
	}
	for range idle {
		<-answered
	}
	mark := len(strings.Split(log.String(), "\n"))
	const garbage = 10000
	t0 := time.Now()
	err = fl.Do(func() error {
		junk := []byte("GET / HTTP/1.0\r\n\r\n")
		buf := make([]byte, 512)
		d := net.Dialer{Timeout: 2 * time.Second}
		deadline := time.Now().Add(2 * time.Minute)
		for i := range garbage {
			if time.Now().After(deadline) {
				return fmt.Errorf("%d garbage connections after 2m, stopping", i)
			}
			c, err := d.Dial("tcp", target)
			if err != nil {
				return fmt.Errorf("garbage connection %d: %w", i, err)
			}
			c.Write(junk)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			c.Read(buf)
			c.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	took = time.Since(t0)
	after := measure(t, pid)
	// The summary the agent writes every 10 s, the first after the
	// garbage ended: every refusal of it is logged or counted by then.
	waitSummary(t, log, strings.Count(log.String(), "\n"))
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")[mark-1:]
	t.Logf("%d garbage connections in %v: %d agent log lines (%d in the whole test); agent now %v; its log since the garbage:\n%s",
		garbage, took.Round(time.Millisecond), len(lines), strings.Count(log.String(), "\n"), after, strings.Join(lines, "\n"))
	if len(lines) >= 100 {
		t.Errorf("%d garbage connections wrote %d log lines", garbage, len(lines))
	}
	if !strings.Contains(log.String(), "unauthenticated peers: ") || !strings.Contains(log.String(), "198.18.18.2 ") {
		t.Errorf("no summary of the refused connections by source:\n%s", strings.Join(lines, "\n"))
	}
	if out, code, _ := run(t, cl, "pmtu", "198.18.18.1", "--token-file", tokFile); code != 0 {
		t.Errorf("pmtu after the garbage flood: exit %d\n%s", code, out)
	}
}

// waitAccepted waits until the listener on port in n has no connection
// left in its accept queue (/proc/net/tcp's rx_queue of a LISTEN socket).
func waitAccepted(t *testing.T, n *lab.Node, port int) {
	t.Helper()
	local := fmt.Sprintf(":%04X", port)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) { // only against a hang
		var data []byte
		if err := n.Do(func() error {
			var err error
			data, err = os.ReadFile("/proc/thread-self/net/tcp")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		queued := -1
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[3] == "0A" && strings.HasSuffix(f[1], local) {
				if _, rx, ok := strings.Cut(f[4], ":"); ok {
					v, _ := strconv.ParseInt(rx, 16, 64)
					queued = int(v)
				}
			}
		}
		if queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent in %s never accepted what waits on port %d (%d queued)", n.Name(), port, queued)
		}
	}
}
