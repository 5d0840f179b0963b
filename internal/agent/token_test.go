package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/shellq/shellqtest"
)

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), mode)
		os.Chmod(p, mode)
		return p
	}
	if tok, err := ReadToken(write("ok", "  secret-token-0123456789\n", 0o600)); err != nil || string(tok) != "secret-token-0123456789" {
		t.Fatalf("good token: %q %v", tok, err)
	}
	for name, c := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"world": {"secret-token-0123456789", 0o644, "readable by everyone"},
		"empty": {"\n", 0o600, "empty"},
		"short": {"abc", 0o600, "at least 16"},
	} {
		_, err := ReadToken(write(name, c.content, c.mode))
		if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
	// A FIFO or a directory is refused unopened: opening a FIFO blocks
	// until a writer comes (bench, pmtu, mesh, agent and watch hung there,
	// deaf to SIGTERM).
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadToken(p); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v, want not a regular file", p, err)
			}
		case <-time.After(60 * time.Second): // only against a hang
			t.Fatalf("%s: ReadToken never returned", p)
		}
	}
}

// TestReadTokenHintsRun: the commands the token errors give, for a path
// with a blank and a quote, are one word each and, pasted into a shell, do
// what they say: chmod the file, create a token.
func TestReadTokenHintsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's a dir")
	os.Mkdir(dir, 0o755)
	p := filepath.Join(dir, "token $(id)")
	os.WriteFile(p, []byte("secret-token-0123456789\n"), 0o644)
	os.Chmod(p, 0o644)
	for _, c := range []struct{ prepare, command, pathAfter string }{
		{"", "run: ", "chmod 600 "},
		{"\n", "create one with: ", "| base64 > "},
	} {
		if c.prepare != "" {
			os.WriteFile(p, []byte(c.prepare), 0o600)
		}
		_, err := ReadToken(p)
		if err == nil {
			t.Fatalf("%s: accepted", c.command)
		}
		msg := err.Error()
		shellqtest.Check(t, msg, 0, c.pathAfter, p)
		line := msg[strings.Index(msg, c.command)+len(c.command):]
		if _, err := shellqtest.Run("sh", dir, line); err != nil {
			t.Fatalf("sh -c %s: %v", line, err)
		}
		if _, err := ReadToken(p); err != nil {
			t.Errorf("after running %s: %v", line, err)
		}
	}
}
