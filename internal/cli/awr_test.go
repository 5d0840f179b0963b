package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
		{"awr", "diff", filepath.Join(awrData, "19c-awrrpt-rac-mtu1500.txt"), "--", filepath.Join(awrData, "19c-awrrpt-rac-mtu9000.txt"), "--", notAWR},
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
	// --html onto a report read replaced the AWR report with the page.
	mine := filepath.Join(t.TempDir(), "awrrpt.html")
	orig, err := os.ReadFile(filepath.Join(awrData, "19c-awrrpt-rac-mtu9000.html"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(mine, orig, 0o644)
	for _, args := range [][]string{{"awr", mine, "--html", mine}, {"awr", "diff", "--html", mine, mine, "--", mine}} {
		out, errs, code := runAWR(t, args...)
		if code != ExitUnknown || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--html "+mine+" is also an input") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
		if b, _ := os.ReadFile(mine); !bytes.Equal(b, orig) {
			t.Fatalf("%q: the AWR report was replaced", args)
		}
	}
	// The second '--' was read as a file named "--".
	_, errs, _ = runAWR(t, "awr", "diff", notAWR, "--", notAWR, "--", notAWR)
	if !strings.Contains(errs, "'--' given twice") {
		t.Errorf("stderr %q", errs)
	}
}

// TestAWRHistory: awr results saved with --save list with a summary in the
// history, and interlink diff compares the newest with the one before it
// metric by metric, as awr diff does (exit 1: changed).
func TestAWRHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	before := filepath.Join(awrData, "19c-awrrpt-rac-mtu1500.html")
	after := filepath.Join(awrData, "19c-awrrpt-rac-mtu9000.html")
	for i, f := range []string{before, after} {
		code, _, stderr := runMain(t, "awr", f, "--save", "--db", db)
		if code > ExitCritical || !strings.Contains(stderr, "saved awr result "+string(rune('1'+i))) {
			t.Fatalf("awr --save %s: exit %d, %q", f, code, stderr)
		}
	}
	code, out, _ := runMain(t, "history", "--db", db)
	for _, s := range []string{"1 report(s) (RACDB 4410-4411), 1 instance(s): CRITICAL: 1 critical, 5 warning, 0 info",
		"1 report(s) (RACDB 4602-4603), 1 instance(s): OK: 0 critical, 0 warning, 0 info"} {
		if code != ExitOK || !strings.Contains(out, s) {
			t.Errorf("history lacks %q: exit %d\n%s", s, code, out)
		}
	}
	code, out, stderr := runMain(t, "diff", "--db", db)
	if code != ExitWarning || !strings.Contains(out, "interlink diff: awr result 2 (") ||
		!strings.Contains(out, "CHANGED awr instance 1 (racdb1) ping_8k_ms to 2: 2.85 ms -> 0.35 ms") || !strings.Contains(out, "CHANGED awr verdict: CRITICAL -> OK") {
		t.Errorf("diff: exit %d\n%s%s", code, out, stderr)
	}
	code, _, _ = runMain(t, "awr", "diff", "--save", "--db", db, before, "--", after)
	if code != ExitOK {
		t.Fatalf("awr diff --save: exit %d", code)
	}
	if _, out, _ := runMain(t, "history", "--db", db, "--command", "awr diff"); !strings.Contains(out, "1 before, 1 after (one sample each): ") {
		t.Errorf("history of awr diff:\n%s", out)
	}
	code, out, stderr = runMain(t, "diff", "3", "3", "--db", db)
	if code != ExitUnknown || out != "" || !strings.Contains(stderr, "awr diff result is a comparison already") {
		t.Errorf("diff of awr diff results: exit %d, %q, %q", code, out, stderr)
	}
}

// TestAWRDiffDatabases: awr diff refuses reports of two DB ids, or of
// 11.2 and 19c, in one line with exit 3; with --any-db it compares each
// database apart, names the one with reports on one side only, and leaves
// out a ping target with no samples.
func TestAWRDiffDatabases(t *testing.T) {
	lost21 := filepath.Join(awrData, "19c-public-layout-lost21.html")
	lost96 := filepath.Join(awrData, "19c-public-layout-lost96.html")
	idle := filepath.Join(awrData, "19c-public-layout-idle.html")
	old := filepath.Join(awrData, "11.2.0.4-public-layout-xydb.html")
	for _, args := range [][]string{
		{"awr", "diff", lost21, "--", idle},
		{"awr", "diff", lost21, old, "--", lost96},
	} {
		out, errs, code := runAWR(t, args...)
		if code != ExitUnknown || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "reports of different databases or releases: ") ||
			!strings.Contains(errs, "or pass --any-db to compare each database apart") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	out, errs, code := runAWR(t, "awr", "diff", "--any-db", lost21, idle, old, "--", lost96, idle)
	if code != ExitWarning || errs != "" {
		t.Fatalf("--any-db: exit %d, %s", code, errs)
	}
	for _, want := range []string{
		"the reports are of 3 database(s), compared apart (--any-db):",
		"XYDB (DB id 1882826147, release 11.2.0.4.0): 1 report(s) before, 0 after",
		"note: database XYDB (DB id 1882826147) has reports before the change only: not compared",
		"database XYDB (DB id 1971498938), instance 1 xydb1",
		"database XYDB (DB id 2028335103), instance 1 xydb1",
		"ping_8k_ms to 1 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--any-db output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ping_8k_ms to 2 ") && strings.Count(out, "ping_8k_ms to 2 ") != 1 {
		t.Errorf("the zero-sample ping of 2028335103 was compared:\n%s", out)
	}
	if !regexp.MustCompile(`gc_lost_blocks\s+count\s+21\s+96\s`).MatchString(out) {
		t.Errorf("lost blocks 21 -> 96 missing:\n%s", out)
	}
}

// TestAWRPageTitleQuoted: the HTML page's title is the command line, with
// a report's name quoted for the shell ($(id) in a file name stays a name).
func TestAWRPageTitleQuoted(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x$(id).html")
	data, err := os.ReadFile(filepath.Join(awrData, "19c-public-layout-lost21.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "page.html")
	if _, errs, code := runAWR(t, "awr", "--html", page, name); code != ExitWarning || errs != "" {
		t.Fatalf("exit %d, %s", code, errs)
	}
	b, _ := os.ReadFile(page)
	if want := "interlink awr &#39;" + dir + "/x$(id).html&#39;"; !strings.Contains(string(b), want) {
		t.Errorf("page lacks %q", want)
	}
}
