package guest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunNotGuest: with a command line that lacks the configuration's
// nonce (a host's, or another boot's), Run returns ErrNotGuest before it
// reads or changes anything; a configuration it cannot read is named.
func TestRunNotGuest(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "guest.json")
	os.WriteFile(cfg, []byte(`{"lab":"l","node":"n1","nonce":"ab12","forward":true}`), 0o644)
	defer func(p string) { cmdlinePath = p }(cmdlinePath)
	for _, cmdline := range []string{"", "console=ttyS0 panic=-1", "console=ttyS0 interlink.guest=other"} {
		cmdlinePath = filepath.Join(dir, "cmdline")
		os.WriteFile(cmdlinePath, []byte(cmdline+"\n"), 0o644)
		var console strings.Builder
		if err := Run(context.Background(), cfg, &console); !errors.Is(err, ErrNotGuest) || console.Len() > 0 {
			t.Errorf("command line %q: %v, console %q; want ErrNotGuest and nothing said", cmdline, err, console.String())
		}
	}
	cmdlinePath = "/nonexistent/cmdline"
	if err := Run(context.Background(), cfg, io.Discard); !errors.Is(err, ErrNotGuest) {
		t.Errorf("no /proc/cmdline: %v, want ErrNotGuest", err)
	}
	cmdlinePath = filepath.Join(dir, "cmdline")
	os.WriteFile(cmdlinePath, []byte("interlink.guest=ab12\n"), 0o644)
	if err := Run(context.Background(), filepath.Join(dir, "absent.json"), io.Discard); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("a missing configuration: %v, want it named", err)
	}
}
