package pmqos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/buftest"
)

// startAgentProc runs `interlink agent --allow-cpu-latency` on loopback
// as its own process and returns it with its address.
func startAgentProc(t *testing.T, bin, tokenFile string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "agent", "--listen", "127.0.0.1:0", "--token-file", tokenFile, "--allow-cpu-latency")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	errs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(errs).ReadString('\n')
	m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("agent did not start: %q", line)
	}
	go func() { // drain its session lines
		b := make([]byte, 4096)
		for {
			if _, err := errs.Read(b); err != nil {
				return
			}
		}
	}()
	return cmd, m[1]
}

// TestKilledEndsRelease: nothing stays held after kill -9 of the agent
// (holding for a session) or of a running bench (holding here and, through
// its session, on the agent); SIGTERM ends a bench with its report, which
// says both ends held.
func TestKilledEndsRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary and runs agents and benches")
	}
	needHoldable(t)
	bin, cleanup, err := bintest.Build("t41-pmqos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, testToken, 0o600); err != nil {
		t.Fatal(err)
	}
	held := func(v int32) bool { return v == testUS }

	t.Run("agent killed", func(t *testing.T) {
		ag, addr := startAgentProc(t, bin, tok)
		if e := PeerEnd(context.Background(), dial(t, addr), testUS); !e.Held {
			t.Fatalf("agent did not hold: %+v", e)
		}
		ag.Process.Signal(syscall.SIGKILL)
		if v, ok := waitAggregate(t, released); !ok {
			t.Errorf("aggregate %d us after kill -9 of the agent: still held", v)
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run("bench "+sig.String(), func(t *testing.T) {
			ag, addr := startAgentProc(t, bin, tok)
			var out buftest.Buffer
			b := exec.Command(bin, "bench", addr, "--token-file", tok, "--mode", "blocks", "--time", "60s",
				"--self-test=false", "--cpu-latency", "7")
			b.Stdout, b.Stderr = &out, &out
			if err := b.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Process.Kill(); b.Wait() })
			if v, ok := waitAggregate(t, held); !ok {
				t.Fatalf("aggregate %d us with bench --cpu-latency 7 running: %s", v, out.String())
			}
			// The agent's hold is taken before the run starts: the signal
			// comes once the agent holds the device open and bench has said
			// so (it prints the holds as the run starts).
			for deadline := time.Now().Add(60 * time.Second); !holdsOpen(ag.Process.Pid) || !strings.Contains(out.String(), "peer "+addr+": held"); time.Sleep(10 * time.Millisecond) { // only against a hang
				if time.Now().After(deadline) {
					t.Fatalf("the agent never opened %s for bench --cpu-latency 7, or bench never said so:\n%s", Path, out.String())
				}
			}
			b.Process.Signal(sig)
			b.Wait()
			if v, ok := waitAggregate(t, released); !ok {
				t.Errorf("aggregate %d us after %v of bench: still held", v, sig)
			}
			if sig == syscall.SIGTERM {
				for _, want := range []string{"CPU latency request (PM QoS, /dev/cpu_dma_latency) of 7 us", "local: held", "peer " + addr + ": held"} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("bench output lacks %q:\n%s", want, out.String())
					}
				}
			}
		})
	}
}

// holdsOpen reports whether process pid has the PM QoS device open.
func holdsOpen(pid int) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == Path {
			return true
		}
	}
	return false
}
