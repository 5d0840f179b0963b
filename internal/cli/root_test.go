package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// run runs the command line and returns exit code, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadUsageIsOneLineExit3(t *testing.T) {
	// Escape sequences in what was typed come back escaped, whichever
	// command quotes it (these reached the terminal raw).
	esc := "\x1b[2J\x1b]0;owned\a"
	cases := [][]string{
		{"bogus"},
		{"version", "--nope"},
		{"version", "extra"},
		{"check", "--" + esc},
		{"check", "--root", "../../testdata/nodes/ol8-dnfs", "--collect", esc + ".zip"},
		{"check", "--root", "../../testdata/nodes/ol8-dnfs", "--html", "/nonexistent" + esc + "/x.html"},
		{"storage", "bench", esc, "--profile", "redo"},
		{"db", "bench", "--dsn", esc},
		{"report", "-o", "/nonexistent" + esc + "/x.html", "x.json"},
		// cobra's help printed the root's usage for these and exited 0.
		{"help", "nonesuch"},
		{"help", "lab", "nonesuch"},
	}
	for _, args := range cases {
		code, _, stderr := runMain(t, args...)
		if code != ExitUnknown {
			t.Errorf("%v: exit %d, want 3", args, code)
		}
		if n := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); n != 0 || !strings.HasPrefix(stderr, "interlink: ") {
			t.Errorf("%v: stderr not one 'interlink: ' line: %q", args, stderr)
		}
		if strings.ContainsAny(strings.TrimSuffix(stderr, "\n"), "\x1b\a") {
			t.Errorf("%q: a control character reached stderr: %q", args, stderr)
		}
	}
}

// TestHelpCommand: help on a command prints its help to stdout, exit 0;
// help alone, the root's.
func TestHelpCommand(t *testing.T) {
	for args, want := range map[string]string{"help": "Available Commands:", "help lab up": "interlink lab up", "help bench": "--mode"} {
		code, stdout, stderr := runMain(t, strings.Fields(args)...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, want) {
			t.Errorf("%s: exit %d, stderr %q, stdout without %q:\n%s", args, code, stderr, want, stdout)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	code, stdout, stderr := runMain(t, "version", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	// A missing key is nil, not "": test the type and the value.
	if ver, ok := v["version"].(string); v["schema"] != "interlink.version/v1" || !ok || ver == "" {
		t.Errorf("bad version document: %v", v)
	}
}

func TestExitCodeMapping(t *testing.T) {
	if exitCode(nil) != ExitOK || exitCode(withCode(ExitCritical)) != ExitCritical ||
		exitCode(withCode(ExitOK)) != ExitOK || exitCode(usageError("x")) != ExitUnknown {
		t.Error("exit code mapping is wrong")
	}
}
