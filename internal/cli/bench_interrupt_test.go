package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/labuptest"
)

// TestBenchInterruptedWhileConnecting: bench stopped by SIGINT while its
// agent has not yet answered the handshake (a listener that accepts and
// stays silent) says in one line that it was interrupted and nothing was
// measured, not "context canceled", and exits 3.
func TestBenchInterruptedWhileConnecting(t *testing.T) {
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-bench-interrupt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Bool
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Store(true)
			t.Cleanup(func() { c.Close() })
		}
	}()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("bench-interrupt-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code, took := runUntilSignal(t, bin, func(int) bool { return accepted.Load() }, syscall.SIGINT,
		"bench", ln.Addr().String(), "--token-file", tok, "--mode", "blocks", "--cpu-latency", "0", "--time", "1s")
	if code != ExitUnknown || !strings.Contains(errOut, "interrupted while connecting to the agent") || strings.Contains(errOut, "context canceled") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("after SIGINT: exit %d in %s, stderr %q; want 3, one line saying it was interrupted while connecting", code, took, errOut)
	}
}
