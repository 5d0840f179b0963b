package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/mariatest"
)

// tinyDisk is a tmpfs of one page (4 KiB) of the test's own; full fills
// it first.
func tinyDisk(t *testing.T, full bool) string {
	t.Helper()
	dir := fixturetest.Tmpfs(t, 0, "size=4k,nr_inodes=64")
	if full {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 512)
		for i := 0; i < 64; i++ { // 32 KiB at most into 4
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return dir
			}
		}
		t.Fatalf("%s took 32 KiB without filling up", dir)
	}
	return dir
}

// readOnlyDisk is an empty read-only tmpfs of the test's own.
func readOnlyDisk(t *testing.T) string {
	return fixturetest.Tmpfs(t, syscall.MS_RDONLY, "size=4k,nr_inodes=16")
}

// TestOutputToReadOnlyPlace: a file to write on a read-only mount is bad
// input found before the run: one line naming it, exit 3, no result
// printed whose report could not be kept.
func TestOutputToReadOnlyPlace(t *testing.T) {
	ro := readOnlyDisk(t)
	node := fixtures + "ol8-rac-bond-jumbo"
	awr := "../awr/testdata/19c-awrrpt-rac-mtu9000.txt"
	for _, args := range [][]string{
		{"check", "--root", node, "--html", filepath.Join(ro, "check.html")},
		{"check", "--root", node, "--collect", filepath.Join(ro, "node.tar.gz")},
		{"awr", awr, "--html", filepath.Join(ro, "awr.html")},
		{"awr", "diff", "--html", filepath.Join(ro, "diff.html"), awr, "--", awr},
		{"report", "-o", filepath.Join(ro, "r.html"), "../report/testdata/lab-check.json"},
		{"check", "--root", node, "--save", "--db", filepath.Join(ro, "history.db")},
		{"awr", awr, "--save", "--db", filepath.Join(ro, "sub", "history.db")},
	} {
		out, errOut, code := run(t, args...)
		if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, ro+": read-only file system") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want 3, nothing printed, one line naming %s", args, code, len(out), errOut, ro)
		}
	}
}

// TestStorageOnFullDisk: storage bench on a full file system is one line
// on stderr saying so, exit 3, and its working directory removed; on
// stdout either nothing (nothing measured) or what the failed step
// measured before the disk was full, marked FAILED, its first line not
// claiming the size asked.
func TestStorageOnFullDisk(t *testing.T) {
	roottest.Require(t, "it mounts a tmpfs")
	full := tinyDisk(t, true)
	for _, p := range []string{"redo", "datafile", "backup", "install", "mkfile"} {
		out, errOut, code := run(t, "storage", "bench", full, "--profile", p, "--size", "1M", "--time", "2s")
		partial := strings.Contains(out, "FAILED: ") && strings.Contains(out, "stopped before the 1.00 MiB asked")
		if code != ExitUnknown || (out != "" && !partial) || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "no space left on device") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 3, one line, nothing printed or a FAILED partial result", p, code, out, errOut)
		}
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("left behind in %s: %v", full, ents)
	}
}

// runTo runs bin with stdout to the file out (created), within 30 s.
func runTo(t *testing.T, bin, out string, args ...string) (stderr string, code int) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, &e
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return e.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return e.String(), 0
}

// TestOutputToFullDisk: every command that writes a result, its output
// sent to a full disk (or one that fills up during the output), exits 3
// with one line on stderr that says so, whatever its verdict would have
// been; and a closed pipe ends it by SIGPIPE.
func TestOutputToFullDisk(t *testing.T) {
	roottest.Require(t, "it mounts a tmpfs")
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-output-full-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	t.Run("closed pipe", func(t *testing.T) { closedPipe(t, bin) })
	awr := "../awr/testdata/"
	node := fixtures + "ol7-everything-wrong"
	// A run of bundles for lab replica, and a history for history and diff.
	work := t.TempDir()
	bundles := filepath.Join(work, "run")
	os.Mkdir(bundles, 0o755)
	db := filepath.Join(work, "history.db")
	for _, args := range [][]string{
		{"check", "--root", node, "--collect", filepath.Join(bundles, "rac1.tar.gz")},
		{"check", "--root", fixtures + "ol8-rac-bond-jumbo", "--collect", filepath.Join(bundles, "rac2.tar.gz")},
		{"check", "--root", node, "--save-as", "base", "--db", db},
		{"check", "--root", node, "--save", "--db", db},
	} {
		if _, errOut, code, _ := runBin(t, bin, 30*time.Second, args...); code == ExitUnknown {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	// Two real agents on loopback for the commands that measure through one.
	agents := meshAgents(t, 93, 2)
	nodes, tok := meshFiles(t, agents)
	peer := strings.Fields(agents[0])[1]
	// A real MariaDB for db bench.
	maria := mariatest.New(t, mariadb.Config{})
	full, empty := tinyDisk(t, true), tinyDisk(t, false)
	for _, c := range []struct {
		args []string
		// fills: the output is larger than the disk (more than 4 KiB), so
		// the command is also run on an empty one, filling up mid-way.
		fills bool
	}{
		{[]string{"version"}, false},
		{[]string{"version", "--json"}, false},
		{[]string{"check", "--root", node}, true},
		{[]string{"check", "--root", node, "--json"}, true},
		{[]string{"check", "--rules"}, true},
		{[]string{"awr", awr + "19c-awrrpt-rac-mtu9000.txt"}, false},
		{[]string{"awr", awr + "19c-awrrpt-rac-mtu9000.txt", "--json"}, true},
		{[]string{"awr", "diff", awr + "19c-awrrpt-rac-mtu1500.txt", "--", awr + "19c-awrrpt-rac-mtu9000.txt"}, false},
		{[]string{"lab", "show", "galera"}, false},
		{[]string{"lab", "list"}, false},
		{[]string{"lab", "replica", bundles}, false},
		{[]string{"history", "--db", db}, false},
		{[]string{"history", "--db", db, "--json"}, false},
		{[]string{"diff", "base", "--db", db}, false},
		{[]string{"completion", "bash"}, true},
		{[]string{"help"}, false},
		// Measuring commands that need no lab: a local path, local commands.
		{[]string{"storage", "bench", work, "--profile", "redo", "--time", "1s", "--size", "4M"}, false},
		{[]string{"ab", "--runs", "2", "--a", "true", "--b", "true"}, false},
		{[]string{"db", "bench", "--dsn", maria.DSN(), "--init", "--table-size", "1000", "--time", "1s"}, false},
		{[]string{"pmtu", peer, "--token-file", tok, "--max", "9000"}, false},
		{[]string{"mesh", "--nodes", nodes, "--token-file", tok, "--max", "9000"}, false},
		{[]string{"bench", peer, "--token-file", tok, "--time", "1s"}, false},
		{[]string{"bench", peer, "--token-file", tok, "--mode", "blocks", "--time", "1s", "--self-test=false"}, false},
	} {
		disks := []string{full}
		if c.fills {
			disks = append(disks, empty)
		}
		for _, disk := range disks {
			out := filepath.Join(disk, "out")
			errOut, code := runTo(t, bin, out, c.args...)
			os.Remove(out)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != ExitUnknown || len(lines) != 1 || !strings.Contains(errOut, "no space left on device") {
				t.Errorf("%s > %s: exit %d, stderr %q; want 3 and one line", strings.Join(c.args, " "), disk, code, errOut)
			}
		}
	}
	// A file a command writes itself: nothing half-written is left.
	for _, args := range [][]string{
		{"check", "--root", node, "--collect", filepath.Join(full, "node.tar.gz")},
		{"report", "-o", filepath.Join(empty, "report.html"), "../report/testdata/lab-check.json", "../report/testdata/lab-awr.json", "../report/testdata/lab-mesh.json"},
	} {
		errOut, code := runTo(t, bin, os.DevNull, args...)
		if code != ExitUnknown || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "no space left on device") {
			t.Errorf("%s: exit %d, stderr %q; want 3 and one line", strings.Join(args, " "), code, errOut)
		}
	}
	for _, d := range []string{full, empty} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Name() != "filler" {
				t.Errorf("%s: %s left behind", d, e.Name())
			}
		}
	}
}

// closedPipe: a reader that went away (| head) ends the command by
// SIGPIPE, silently, as Unix tools end.
func closedPipe(t *testing.T, bin string) {
	for _, args := range [][]string{
		{"version"},
		{"check", "--root", fixtures + "ol7-everything-wrong"},
		{"lab", "show", "galera"},
		{"awr", "../awr/testdata/19c-awrrpt-rac-mtu9000.txt"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = w, &e
		timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		err = cmd.Run()
		timer.Stop()
		w.Close()
		var ee *exec.ExitError
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !errors.As(err, &ee) || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE || e.Len() != 0 {
			t.Errorf("%s | (closed): %v, stderr %q; want killed by SIGPIPE, silently", strings.Join(args, " "), err, e.String())
		}
	}
}
