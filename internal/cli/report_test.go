package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const reportFixtures = "../report/testdata/"

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	files, _ := filepath.Glob(reportFixtures + "lab-*.json")
	args := append([]string{"report", "-o", out, "--title", "lab <run>"}, files...)
	code, stdout, stderr := runMain(t, args...)
	if code != ExitOK || stdout != "" || stderr != "" {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<title>lab &lt;run&gt;</title>", "mesh-heatmap", "ab-verdict", "bench-cdf", `class="finding warning"`, "pmtu-bars"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the report's directory holds %d files, want only the report", len(entries))
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := reportFixtures + "lab-pmtu.json"
	out := filepath.Join(dir, "out.html")
	// Targets a rename would replace with a regular file: a named pipe,
	// and a link to /dev/null (as root, -o /dev/null replaced the device).
	fifo := filepath.Join(dir, "pipe.html")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mine := write("mine.json", mustRead(t, good)) // -o onto an input replaced it
	null := filepath.Join(dir, "null.html")
	if err := os.Symlink(os.DevNull, null); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", out, good, write("bad.json", `{"schema": "interlink.mesh/v1", "paths": [`)}, "bad.json: not an interlink result: bad JSON: unexpected end"},
		{[]string{"report", "-o", out, write("trunc.json", `{"schema":`)}, "trunc.json: not an interlink result: bad JSON"},
		{[]string{"report", "-o", out, write("ver.json", `{"schema":"interlink.version/v1"}`)}, `schema "interlink.version/v1" is not one of`},
		{[]string{"report", "-o", out, write("none.json", `{"paths":[]}`)}, `no "schema" field`},
		{[]string{"report", "-o", out, filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{"report", "-o", out, dir}, "is a directory"},
		{[]string{"report", good}, "-o FILE is required"},
		{[]string{"report", "-o", filepath.Join(dir, "nodir", "x.html"), good}, "no such file or directory"},
		{[]string{"report", "-o", out}, "expected one or more RESULT.json"},
		{[]string{"report", "-o", fifo, good}, "pipe.html: is a named pipe (FIFO), not a file to write"},
		{[]string{"report", "-o", mine, good, mine}, "-o " + mine + " is also an input"},
		{[]string{"report", "-o", null, good}, "null.html: is a character device, not a file to write"},
	} {
		code, stdout, stderr := runMain(t, tc.args...)
		if code != ExitUnknown || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q, exit 3", tc.args[1:], code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: a report was written despite the error", tc.args[1:])
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is now %v (%v)", fi.Mode(), err)
	}
	if got := mustRead(t, mine); got != mustRead(t, good) {
		t.Errorf("the input given as -o was changed: %.60q", got)
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is now %v (%v)", null, fi.Mode(), err)
	}
}

// TestCheckHTML: --html writes the same audit as a report, and a
// directory that does not exist is refused before anything is read.
func TestCheckHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "check.html")
	code, stdout, stderr := runMain(t, "check", "--root", fixtures+"ol7-everything-wrong", "--html", out)
	if code != ExitCritical || !strings.Contains(stdout, "CRITICAL") {
		t.Fatalf("check: exit %d, stderr %q", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `class="finding critical"`) || !strings.Contains(string(b), "<dt>fix</dt>") {
		t.Error("the HTML report lacks the critical findings with their fix")
	}
	// The host's side of the interconnect, as the text prints it under
	// "host:", has its section too.
	guest := filepath.Join(t.TempDir(), "guest.html")
	_, gout, _ := runMain(t, "check", "--root", fixtures+"kvm-guest-haltpoll-0", "--html", guest)
	g, err := os.ReadFile(guest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gout, "haltpoll: guest_halt_poll_ns 0") || !strings.Contains(string(g), "<h3>Host: how it wakes for a block</h3>") || !strings.Contains(string(g), "haltpoll: guest_halt_poll_ns 0") {
		t.Error("the HTML report of a KVM guest lacks the host section the text has")
	}
	code, _, stderr = runMain(t, "check", "--root", fixtures+"ol7-everything-wrong", "--html", "/nonexistent/dir/check.html")
	if code != ExitUnknown || !strings.HasPrefix(stderr, "interlink: check: --html /nonexistent/dir/check.html: directory /nonexistent/dir") {
		t.Errorf("--html into a missing directory: exit %d, %q", code, stderr)
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
