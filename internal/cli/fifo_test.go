package cli

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFileFlagsFIFO: every file a person names to mesh, watch, cluster,
// gate and lab up is refused at once when it is a FIFO, with one line and
// exit 3. os.Open of a FIFO blocks until a writer comes, and these
// commands hung there, deaf to SIGTERM (only SIGKILL ended them).
func TestFileFlagsFIFO(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, tok := benchAgent(t)
	for _, args := range [][]string{
		{"bench", "127.0.0.1", "--token-file", fifo},
		{"mesh", "--nodes", fifo, "--token-file", tok},
		{"watch", "--nodes", fifo, "--token-file", tok, "--metrics", "127.0.0.1:0"},
		{"watch", "--inventory", fifo, "--token-file", tok, "--metrics", "127.0.0.1:0"},
		{"cluster", "--inventory", fifo},
		{"gate", "--config", fifo},
		{"lab", "up", fifo},
	} {
		type result struct {
			code        int
			out, errOut string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errOut := runCLI(context.Background(), args...)
			done <- result{code, out, errOut}
		}()
		select {
		case r := <-done:
			if r.code != ExitUnknown || r.out != "" || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, "named pipe (FIFO)") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 3 and one line naming the FIFO", args, r.code, r.out, r.errOut)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: still blocked after 10 s", args)
		}
	}
}
