package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/lab"
)

func runLab(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"lab"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// The kernel side of `interlink lab` is tested in internal/lab (it needs
// root); here: usage, list and show, which need no lab.
func TestLabUsage(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	for _, args := range [][]string{
		{"bogus"}, {"up"}, {"up", "a", "b"}, {"down"}, {"down", "x", "--all"}, {"status", "a", "b"},
		{"exec"}, {"exec", "a", "b"}, {"exec", "a", "b", "--"}, {"show", "nope"}, {"up", "nope"}, {"list", "x"},
		// An empty or bad --name is refused before anything is built (it
		// used to fall back to the file's name and replace that lab).
		{"up", "jumbo", "--name", ""}, {"up", "jumbo", "--name", "Bad!"}, {"up", "nope", "--name", ""},
	} {
		code, stdout, stderr := runLab(t, args...)
		if code != ExitUnknown || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "interlink: ") {
			t.Errorf("lab %v: exit %d, stdout %q, stderr %q; want exit 3 and one line", args, code, stdout, stderr)
		}
		if len(args) > 2 && args[2] == "--name" && !strings.HasPrefix(stderr, "interlink: lab up: --name ") {
			t.Errorf("lab %v: stderr %q; want the --name refused first", args, stderr)
		}
	}
}

func TestLabListAndShow(t *testing.T) {
	t.Setenv("INTERLINK_LAB_DIR", t.TempDir())
	code, stdout, stderr := runLab(t, "list", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("list --json: exit %d, %q", code, stderr)
	}
	var doc LabDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "interlink.lab/v1" || len(doc.Builtins) != len(lab.Builtins()) || len(doc.Labs) != 0 {
		t.Errorf("list document %+v", doc)
	}
	code, stdout, _ = runLab(t, "list")
	if code != 0 || !strings.Contains(stdout, "blackhole  switch-port blackhole") || !strings.Contains(stdout, "no labs are up") {
		t.Errorf("list: exit %d\n%s", code, stdout)
	}
	for _, b := range lab.Builtins() {
		code, stdout, _ := runLab(t, "show", b.Name)
		if code != 0 {
			t.Fatalf("show %s: exit %d", b.Name, code)
		}
		top, err := lab.Parse(b.Name+".yaml", []byte(stdout))
		if err != nil || top.Name != b.Name {
			t.Errorf("show %s does not parse back: %v", b.Name, err)
		}
	}
}
