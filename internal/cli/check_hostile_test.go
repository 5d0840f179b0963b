package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net"
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
	"github.com/interlink/interlink/internal/rules"
)

// runBin runs the built binary with a bound of limit (only against a
// hang) and returns its output, exit code and run time; it fails the test
// when the bound is hit.
func runBin(t *testing.T, bin string, limit time.Duration, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("interlink %s still running after %s (killed)", strings.Join(args, " "), limit)
	}
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code, took
}

// TestCheckHostileTree runs the built binary, as an engineer would, on
// trees with named pipes, devices and sockets where check reads files, and
// stops it with SIGINT and SIGTERM.
func TestCheckHostileTree(t *testing.T) {
	roottest.Require(t, "it creates device nodes")
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-check-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)

	t.Run("fifo only", func(t *testing.T) {
		// The reproduction of issue 18: this blocked in open(2) forever.
		r := t.TempDir()
		os.MkdirAll(filepath.Join(r, "proc/net"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(r, "proc/net/snmp"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code, took := runBin(t, bin, 10*time.Second, "check", "--root", r)
		if code != ExitUnknown || out != "" {
			t.Errorf("exit %d, stdout %q; want 3 and nothing on stdout", code, out)
		}
		want := "interlink: check: nothing could be read under " + r + ": /proc/net/snmp (a named pipe (FIFO), not a regular file (not opened))\n"
		if errOut != want {
			t.Errorf("stderr %q\nwant   %q", errOut, want)
		}
		t.Logf("FIFO-only tree: exit %d in %s", code, took)
	})

	t.Run("devices and sockets", func(t *testing.T) {
		r := t.TempDir()
		fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", r)
		for _, p := range []string{"proc/net/snmp", "etc/os-release"} {
			os.Remove(filepath.Join(r, p))
		}
		if err := syscall.Mkfifo(filepath.Join(r, "proc/net/snmp"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mknod(filepath.Join(r, "etc/os-release"), syscall.S_IFCHR|0o644, 5<<8); err != nil { // /dev/tty (major 5, minor 0)
			t.Fatal(err)
		}
		os.Remove(filepath.Join(r, "proc/net/netstat"))
		l, err := net.Listen("unix", filepath.Join(r, "proc/net/netstat"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out, errOut, code, _ := runBin(t, bin, 10*time.Second, "check", "--root", r)
		if code == ExitUnknown {
			t.Fatalf("exit 3: %s", errOut)
		}
		for _, want := range []string{"interlink check: rac1, kernel ",
			"files       partial  3 not read: /etc/os-release (a character device, not a regular file (not opened)); /proc/net/netstat (a socket, not a regular file (not opened)); /proc/net/snmp (a named pipe (FIFO), not a regular file (not opened))",
			"(not fully read: counters, files)"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("wholly unreadable", func(t *testing.T) {
		// A tree an ordinary user can read nothing of is not an OK node.
		// t.TempDir's parent is private to root; nobody must reach the tree.
		dir, err := os.MkdirTemp("", "interlink-unreadable-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
		for _, d := range []string{"proc", "sys", "etc", "u01"} {
			if err := os.Chmod(filepath.Join(dir, d), 0); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "check", "--root", dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitUnknown || o.Len() != 0 {
			t.Fatalf("as nobody: %v, stdout %q, stderr %q; want exit 3 and one line", err, o.String(), e.String())
		}
		if s := e.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "nothing could be read under "+dir+": /etc/") ||
			!strings.Contains(s, " (permission denied); ") {
			t.Errorf("stderr %q", s)
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("stopped by "+sig.String(), func(t *testing.T) {
			// --interval makes check wait between two counter samples;
			// a signal cuts the wait and the totals are reported.
			r := t.TempDir()
			fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", r)
			// The tree is read in well under the second (nothing says when
			// the wait starts); a signal during the read would fail below.
			out, errOut, code, took := runUntilSignal(t, bin, after(time.Second), sig, "check", "--root", r, "--interval", "5m")
			if code == ExitUnknown || !strings.Contains(out, "interval sample cancelled") {
				t.Errorf("exit %d after %s: %s %s", code, sig, out, errOut)
			}
			t.Logf("%s: exited %s after the signal", sig, took.Round(time.Millisecond))
		})
	}
}

// escape is a terminal attack: retitle the window, clear the screen.
const escape = "\x1b]0;PWNED\x07\x1b[2J"

// TestCheckEscapesCleaned: escape sequences in a tree's hostname,
// os-release, interface names and mount tables reach the text report only
// escaped; the JSON report keeps the raw values (JSON escapes them).
func TestCheckEscapesCleaned(t *testing.T) {
	fixedClock(t)
	r := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", r)
	fixturetest.Write(t, r, "proc/sys/kernel/hostname", "rac1"+escape+"\n")
	fixturetest.Write(t, r, "etc/os-release", "PRETTY_NAME=\"Oracle"+escape+"\"\n")
	mi, err := os.ReadFile(filepath.Join(r, "proc/self/mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	fixturetest.Write(t, r, "proc/self/mountinfo", string(mi)+"garbage"+escape+" line\n")
	fixturetest.Write(t, r, "etc/fstab", "nas09:/vol/x /u09/"+escape+" nfs rw,hard,vers=3 0 0\n")
	fixturetest.Write(t, r, "sys/class/net/eth"+escape+"/mtu", "1500\n")
	fixturetest.Write(t, r, "sys/class/net/eth"+escape+"/operstate", "up"+escape+"\n")

	out, errOut, code := run(t, "check", "--root", r)
	if code == ExitUnknown {
		t.Fatalf("exit 3: %s", errOut)
	}
	if strings.ContainsAny(out+errOut, "\x1b\x07") {
		t.Errorf("raw escape in the text report:\n%q", out)
	}
	for _, want := range []string{`interlink check: rac1\e]0;PWNED\x07\e[2J, Oracle\e]0;PWNED\x07\e[2J`,
		`eth\e]0;PWNED\x07\e[2J`, `/u09/\e]0;PWNED\x07\e[2J`, `garbage\e]0;PWNED\x07\e[2J line`} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}

	out, _, _ = run(t, "check", "--root", r, "--json")
	var res rules.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Node.Hostname != "rac1"+escape || res.Node.OS != "Oracle"+escape {
		t.Errorf("JSON does not keep the raw values: %q %q", res.Node.Hostname, res.Node.OS)
	}
}

// TestCheckHostileBundleMessage: a bundle refused for an entry whose name
// holds escape sequences is named in one cleaned line, and leaves no
// unpacked tree behind.
func TestCheckHostileBundleMessage(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "dev/x" + escape, Typeflag: tar.TypeChar, Devmajor: 5})
	tw.Close()
	zw.Close()
	bundle := filepath.Join(dir, "b.tar.gz")
	os.WriteFile(bundle, buf.Bytes(), 0o644)
	t.Setenv("TMPDIR", tmp)
	out, errOut, code := run(t, "check", "--root", bundle)
	if code != ExitUnknown || out != "" || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.ContainsAny(errOut, "\x1b\x07") || !strings.Contains(errOut, `dev/x\e]0;PWNED\x07\e[2J: unsupported entry type`) {
		t.Errorf("stderr %q", errOut)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}
