package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/interlink/interlink/internal/drift"
	"github.com/interlink/interlink/internal/store"
)

// TestHistoryAndDiff saves two audits through the commands, lists and
// filters them, and diffs them by id, by baseline name, by default and as
// files.
func TestHistoryAndDiff(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h", "history.db")
	code, _, stderr := runMain(t, "check", "--root", fixtures+"ol8-rac-bond-jumbo", "--save-as", "good", "--label", "site=dc1", "--db", db)
	if code > ExitCritical || !strings.Contains(stderr, `saved check result 1 as "good" in `+db) {
		t.Fatalf("check --save-as: exit %d, %q", code, stderr)
	}
	code, _, stderr = runMain(t, "check", "--root", fixtures+"ol7-everything-wrong", "--save", "--label", "site=dc2", "--db", db, "--json")
	if code != ExitCritical || !strings.Contains(stderr, "saved check result 2 in") {
		t.Fatalf("check --save: exit %d, %q", code, stderr)
	}
	code, out, _ := runMain(t, "history", "--db", db)
	if code != ExitOK || strings.Count(out, "\n") != 3 || !strings.Contains(out, "site=dc1") || !strings.Contains(out, "good") || !strings.Contains(out, "CRITICAL:") {
		t.Errorf("history: exit %d\n%s", code, out)
	}
	code, out, _ = runMain(t, "history", "--db", db, "--label", "site=dc2", "--json", "--since", "1h")
	var doc store.History
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || len(doc.Results) != 1 || doc.Results[0].ID != 2 || doc.Results[0].Command != "check" ||
		doc.Results[0].Args[0] != "check" || doc.Results[0].Doc != nil {
		t.Errorf("history --label --json: exit %d, %v, %+v", code, err, doc)
	}
	if _, out, _ = runMain(t, "history", "--db", db, "--command", "mesh"); !strings.Contains(out, "no saved results match") {
		t.Errorf("history --command mesh: %q", out)
	}

	// The newest against its previous run, and against the named baseline.
	for _, args := range [][]string{{"diff"}, {"diff", "good"}, {"diff", "#1", "2"}} {
		code, out, stderr = runMain(t, append(args, "--db", db)...)
		if code != ExitWarning || !strings.Contains(out, "interlink diff: check result 2 (") || !strings.Contains(out, "WORSE   new finding") ||
			!strings.Contains(out, "worse: ") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	code, out, _ = runMain(t, "diff", "2", "2", "--db", db, "--json")
	var dd drift.Doc
	if err := json.Unmarshal([]byte(out), &dd); err != nil || code != ExitOK || dd.Diff.Verdict != "no change" || dd.Result.ID != 2 {
		t.Errorf("diff 2 2: exit %d, %v, %s", code, err, out)
	}
	// Files need no history.
	f := reportFixtures + "lab-check.json"
	if code, out, _ = runMain(t, "diff", f, f, "--db", filepath.Join(t.TempDir(), "none", "x.db")); code != ExitOK || !strings.Contains(out, "no change: 0 change(s)") {
		t.Errorf("diff FILE FILE: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "nosuch"}, `no result named "nosuch" in the history (and no file nosuch)`},
		{[]string{"diff", "99"}, "no result 99 in the history"},
		{[]string{"diff", "1", t.TempDir()}, "is a directory, not a result file)"},
		{[]string{"diff", ""}, "diff: an empty argument: want a result id"},
		{[]string{"diff", "1", reportFixtures + "lab-mesh.json"}, "the baseline is a check result and the result a mesh one"},
		{[]string{"diff", "1", "2", "3"}, "expected at most BASELINE and RESULT"},
		{[]string{"history", "--since", "yesterday"}, "--since \"yesterday\": want a duration"},
		{[]string{"history", "--since", "9223372036854775807d"}, "more than 36525 days (100 years) back"},
		{[]string{"history", "--command", "chekc"}, `--command "chekc": no command saves results by that name (ab, awr, awr diff, bench, check, lab demo, mesh, pmtu`},
		{[]string{"check", "--root", fixtures + "ol7-everything-wrong", "--save-as", "12"}, "--save-as \"12\": want a name"},
		{[]string{"check", "--root", fixtures + "ol7-everything-wrong", "--label", "a=b"}, "--label goes with --save"},
	} {
		code, out, stderr := runMain(t, append(tc.args, "--db", db)...)
		if code != ExitUnknown || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q", tc.args, code, out, stderr, tc.want)
		}
	}
}

// TestHistoryCorrupt: a history file that is not one gives one line and
// exit 3 from every command that uses it, before any work, and is left
// byte for byte as it was.
func TestHistoryCorrupt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	junk := bytes.Repeat([]byte("not sqlite "), 1000)
	if err := os.WriteFile(db, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "--root", fixtures + "ol7-everything-wrong", "--save"},
		{"history"},
		{"diff"},
		{"diff", "good"},
	} {
		code, out, stderr := runMain(t, append(args, "--db", db)...)
		if code != ExitUnknown || out != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "--db "+db+": not an interlink history database (file is not a database); the file was left as it is") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if b, _ := os.ReadFile(db); sha256.Sum256(b) != sha256.Sum256(junk) {
		t.Error("the corrupt file was changed")
	}
	if ents, _ := os.ReadDir(filepath.Dir(db)); len(ents) != 1 {
		t.Errorf("%d files beside the corrupt history (a journal left behind?)", len(ents)-1)
	}
}

// TestHistoryNothingCreated: history and diff only read, and a run
// refused for bad input saves nothing: none of them creates a history,
// its directory or a journal, nor writes into an empty file; a --db that
// is a named pipe or a device is one line naming what it is.
func TestHistoryNothingCreated(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new", "history.db")
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.db")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout for exit 0, in the one line of stderr for 3
	}{
		{[]string{"history", "--db", db}, ExitOK, "no saved results match in " + db},
		{[]string{"history", "--db", empty, "--json"}, ExitOK, `"results": []`},
		{[]string{"diff", "--db", db}, ExitUnknown, "nothing saved yet"},
		{[]string{"diff", "good", "--db", empty}, ExitUnknown, `no result named "good"`},
		{[]string{"check", "--root", filepath.Join(dir, "nope"), "--save", "--db", db}, ExitUnknown, "--root"},
		{[]string{"check", "--root", filepath.Join(dir, "nope"), "--save", "--db", empty}, ExitUnknown, "--root"},
		{[]string{"history", "--db", pipe}, ExitUnknown, "--db " + pipe + ": " + pipe + " is a named pipe (FIFO), not a history file"},
		{[]string{"check", "--root", fixtures + "ol8-dnfs", "--save", "--db", pipe}, ExitUnknown, "is a named pipe (FIFO), not a history file"},
		{[]string{"check", "--root", fixtures + "ol8-dnfs", "--save", "--db", os.DevNull}, ExitUnknown, "is a character device, not a history file"},
	} {
		code, out, stderr := runMain(t, c.args...)
		switch {
		case code != c.code:
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, stderr)
		case code == ExitOK && (stderr != "" || !strings.Contains(out, c.want)):
			t.Errorf("%v: stdout %q, stderr %q; want %q", c.args, out, stderr, c.want)
		case code == ExitUnknown && (out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want)):
			t.Errorf("%v: stdout %q, stderr %q; want one line with %q", c.args, out, stderr, c.want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d entries in %s, want the empty file and the pipe: %v", len(ents), dir, ents)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written: %v %v", fi.Size(), err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is now %v (%v)", os.DevNull, fi.Mode(), err)
	}
}

// TestHistoryConcurrentSaves: commands saving at the same moment all land.
func TestHistoryConcurrentSaves(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _, stderr := runMain(t, "check", "--root", fixtures+"debian12-netplan", "--save", "--db", db, "--json"); code == ExitUnknown {
				t.Errorf("concurrent save: %s", stderr)
			}
		}()
	}
	wg.Wait()
	_, out, _ := runMain(t, "history", "--db", db, "--json")
	var doc store.History
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != n {
		t.Errorf("%d results after %d concurrent saves (%v)", len(doc.Results), n, err)
	}
}
