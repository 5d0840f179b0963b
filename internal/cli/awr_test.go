package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runAWR(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

var awrData = filepath.Join("..", "awr", "testdata")

func TestAWRCommand(t *testing.T) {
	before := filepath.Join(awrData, "11.2.0.3-awrrpt-rac-mtu1500.txt")
	after := filepath.Join(awrData, "11.2.0.3-awrrpt-rac-mtu9000.txt")
	out, _, code := runAWR(t, "awr", before)
	if code != ExitCritical || !strings.Contains(out, "AWR-GC-LOST") {
		t.Errorf("awr before: exit %d\n%s", code, out)
	}
	if _, _, code := runAWR(t, "awr", after); code != ExitOK {
		t.Errorf("awr after: exit %d, want 0", code)
	}
	out, _, code = runAWR(t, "awr", "--json", after)
	var doc struct{ Schema string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != "interlink.awr/v1" || code != ExitOK {
		t.Errorf("--json: exit %d schema %q err %v", code, doc.Schema, err)
	}
	out, _, code = runAWR(t, "awr", "diff", before, "--", after)
	if code != ExitOK || !strings.Contains(out, "one report per side") || !strings.Contains(out, "gc_cr_receive_ms") {
		t.Errorf("awr diff: exit %d\n%s", code, out)
	}
	// Reversed, the change is worse: exit 1.
	if _, _, code := runAWR(t, "awr", "diff", after, "--", before); code != ExitWarning {
		t.Errorf("awr diff reversed: exit %d, want 1", code)
	}
	html := filepath.Join(t.TempDir(), "awr.html")
	if _, errs, code := runAWR(t, "awr", "--html", html, after); code != ExitOK || errs != "" {
		t.Errorf("--html: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("Interconnect")) {
		t.Error("--html wrote no AWR page")
	}
}

// TestAWRBadInput: a file that is not an AWR report, a missing file, a
// directory, diff without '--': one line on stderr, exit 3.
func TestAWRBadInput(t *testing.T) {
	notAWR := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notAWR, []byte("quarterly numbers\n1,234.5\n"), 0o644)
	for _, args := range [][]string{
		{"awr", notAWR}, {"awr", "/nonexistent/awr.txt"}, {"awr", t.TempDir()}, {"awr"},
		{"awr", "diff", notAWR}, {"awr", "diff", "--", notAWR},
	} {
		out, errs, code := runAWR(t, args...)
		if code != ExitUnknown || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want exit 3 and one line", args, code, out, errs)
		}
	}
	_, errs, _ := runAWR(t, "awr", notAWR)
	if !strings.Contains(errs, "is not an AWR report") {
		t.Errorf("stderr %q", errs)
	}
}
