package replica

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesWhatIsNotARegularFile: a RUN that is a FIFO or a device
// is refused at once as bad input (before, a FIFO blocked the read and
// /dev/zero filled memory).
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "run.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{{fifo, "a named pipe (FIFO)"}, {"/dev/zero", "a character device"}} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(context.Background(), c.path)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.kind) {
				t.Errorf("Load(%s) = %v, want bad input naming %q", c.path, err, c.kind)
			}
		case <-time.After(60 * time.Second): // only against a hang
			t.Fatalf("Load(%s) blocked", c.path)
		}
	}
}
