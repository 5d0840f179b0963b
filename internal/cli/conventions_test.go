package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	code, out, errb := runMain(t, "--version")
	if code != ExitOK || errb != "" || !strings.HasPrefix(out, "interlink ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	_, v, _ := runMain(t, "version")
	if v != out {
		t.Errorf("--version %q and version %q differ", out, v)
	}
}

func TestNoCommandIsUsageExit3(t *testing.T) {
	code, out, errb := runMain(t)
	if code != ExitUnknown || out != "" || !strings.Contains(errb, "Available Commands:") {
		t.Errorf("no command: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--verison"}, "interlink: unknown flag: --verison; did you mean --version? (see 'interlink --help')"},
		{[]string{"version", "--jsn"}, "interlink: version: unknown flag: --jsn; did you mean --json? (see 'interlink version --help')"},
		{[]string{"lab", "up", "--nmae", "x", "jumbo"}, "interlink: lab up: unknown flag: --nmae; did you mean --name?"},
		{[]string{"chek"}, `interlink: unknown command "chek" (did you mean check?)`},
		{[]string{"version", "--zzzzzz"}, "interlink: version: unknown flag: --zzzzzz (see"},
	} {
		code, _, errb := runMain(t, tc.args...)
		if code != ExitUnknown || !strings.HasPrefix(errb, tc.want) || strings.Count(errb, "\n") != 1 || strings.Contains(errb, "interlink: interlink") {
			t.Errorf("%v: exit %d, stderr %q; want one line starting %q", tc.args, code, errb, tc.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_interlink", "zsh": "#compdef interlink", "fish": "complete -c interlink"} {
		code, out, errb := runMain(t, "completion", shell)
		if code != ExitOK || errb != "" || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(out), errb)
		}
	}
	if code, _, errb := runMain(t, "completion", "tcsh"); code != ExitUnknown || !strings.Contains(errb, `unknown shell "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, %q", code, errb)
	}
	// bash really loads the script and registers the completion.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash not found: %v", err)
	}
	_, script, _ := runMain(t, "completion", "bash")
	f := filepath.Join(t.TempDir(), "interlink.bash")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bash, "-c", "source "+f+" && complete -p interlink").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "__start_interlink") {
		t.Errorf("bash did not register the completion: %v: %s", err, out)
	}
}

// TestReadmeCommandTable keeps the README's command table generated from
// the command definitions (go test ./internal/cli -run ReadmeCommand -update
// or make docs rewrites it).
func TestReadmeCommandTable(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceCommandTable(b, CommandTable(NewRoot(io.Discard, io.Discard)))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) == string(b) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Error("README.md's command table is stale: run 'make docs' (or this test with -update)")
}
