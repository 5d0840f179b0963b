package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/labuptest"
)

// TestReadersHostileFiles runs the built binary, as a person would, on
// what is not a regular file where awr, awr diff, report and diff read
// files, and stops a long awr read with SIGTERM and SIGINT.
func TestReadersHostileFiles(t *testing.T) {
	labuptest.SkipShort(t)
	bin, cleanup, err := bintest.Build("interlink-awr-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(awrData, "19c-public-layout-lost96.html")

	t.Run("issue 34: timeout -s TERM 2 interlink awr /dev/zero", func(t *testing.T) {
		if _, err := exec.LookPath("timeout"); err != nil {
			t.Fatal("timeout(1) missing: apt-get install coreutils")
		}
		// Refused before any read, not read until timeout's TERM.
		_, errOut, code, took := runBin(t, "timeout", 60*time.Second, "-s", "TERM", "2", bin, "awr", "/dev/zero")
		if want := "interlink: awr: /dev/zero is a character device: not a regular file\n"; code != ExitUnknown || errOut != want {
			t.Errorf("exit %d after %s, stderr %q; want 3 and %q", code, took, errOut, want)
		}
		t.Logf("awr /dev/zero: exit %d in %s", code, took.Round(time.Millisecond))
	})

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"awr", "/dev/zero"}, "interlink: awr: /dev/zero is a character device: not a regular file\n"},
		{[]string{"awr", fifo}, "interlink: awr: " + fifo + " is a named pipe (FIFO): not a regular file\n"},
		{[]string{"awr", dir}, "interlink: awr: " + dir + " is a directory: not a regular file\n"},
		{[]string{"awr", "diff", good, "--", fifo}, "interlink: awr diff: " + fifo + " is a named pipe (FIFO): not a regular file\n"},
		{[]string{"report", "/dev/zero", "-o", filepath.Join(dir, "r.html")}, "interlink: report: /dev/zero is a character device: not a regular file; not a result file\n"},
		{[]string{"report", fifo, "-o", filepath.Join(dir, "r.html")}, "interlink: report: " + fifo + " is a named pipe (FIFO): not a regular file; not a result file\n"},
		{[]string{"diff", fifo, "--db", filepath.Join(dir, "history.db")}, "interlink: diff: " + fifo + " is a named pipe (FIFO): not a regular file; not a result file\n"},
	} {
		out, errOut, code, took := runBin(t, bin, 60*time.Second, c.args...)
		if code != ExitUnknown || out != "" || errOut != c.want {
			t.Errorf("%s: exit %d in %s, stdout %q\nstderr %q\nwant   %q", strings.Join(c.args, " "), code, took, out, errOut, c.want)
		}
	}

	// An AWR report followed by far more than can be read in the test:
	// a sparse file, its title then zeros.
	long := filepath.Join(dir, "long.txt")
	f, err := os.Create(long)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("WORKLOAD REPOSITORY report for\n\nDB Name         DB Id    Instance     Inst Num Startup Time    Release     RAC\n")
	err = f.Truncate(1 << 40)
	if err != nil {
		err = f.Truncate(64 << 30)
	}
	f.Close()
	if err != nil {
		t.Fatalf("sparse file: %v", err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("awr stopped by "+sig.String(), func(t *testing.T) {
			_, errOut, code, took := runUntilSignal(t, bin, reading(long), sig, "awr", long)
			if code != ExitUnknown || !strings.Contains(errOut, "interrupted before the report was read") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("after %s: exit %d in %s, stderr %q; want 3, one line", sig, code, took, errOut)
			}
			t.Logf("%s: exited %s after the signal", sig, took.Round(time.Millisecond))
		})
	}

	// report - reads standard input whole; a pipe whose writer stays open
	// (or a terminal) blocks that read, which a signal did not end: the
	// process caught SIGINT and SIGTERM for its context and read on.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("report - stopped by "+sig.String(), func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			pw.WriteString(`{"schema": "interlink.check/v1",`)
			out := filepath.Join(dir, "stdin.html")
			_, errOut, code, took := runUntilSignalIn(t, pr, bin, drained(pr), sig, "report", "-", "-o", out)
			if code != ExitUnknown || errOut != "interlink: report: -: interrupted before it was read\n" {
				t.Errorf("after %s: exit %d in %s, stderr %q; want 3, one line", sig, code, took, errOut)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written from an interrupted read", out)
			}
			t.Logf("%s: exited %s after the signal", sig, took.Round(time.Millisecond))
		})
	}
}

// runUntilSignal starts the built binary, sends it sig once ready(its
// PID) holds, and returns its output, exit code and the time from the
// signal to its exit (logged, not held); it fails the test when the binary
// is never ready or never exits after the signal.
func runUntilSignal(t *testing.T, bin string, ready func(pid int) bool, sig syscall.Signal, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	return runUntilSignalIn(t, nil, bin, ready, sig, args...)
}

// reading is ready once the process has read into path (its descriptor's
// offset has moved): its signal handling is in place by then.
func reading(path string) func(pid int) bool {
	return func(pid int) bool {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l != path {
				continue
			}
			info, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
			for _, line := range strings.Split(string(info), "\n") {
				if pos, ok := strings.CutPrefix(line, "pos:"); ok && strings.TrimSpace(pos) != "0" {
					return true
				}
			}
		}
		return false
	}
}

// drained is ready once the process has read all that waits in the pipe
// r (it reads on, blocked): its signal handling is in place by then.
func drained(r *os.File) func(int) bool {
	return func(int) bool {
		sc, err := r.SyscallConn()
		if err != nil {
			return false
		}
		n := -1
		sc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
		return n == 0
	}
}

// after is ready once d has passed: for a wait no event marks.
func after(d time.Duration) func(int) bool {
	start := time.Now()
	return func(int) bool { return time.Since(start) >= d }
}

// runUntilSignalIn is runUntilSignal with the binary's standard input
// read from stdin (nil: none).
func runUntilSignalIn(t *testing.T, stdin *os.File, bin string, ready func(pid int) bool, sig syscall.Signal, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(60 * time.Second); !ready(cmd.Process.Pid); time.Sleep(5 * time.Millisecond) { // only against a hang
		if time.Now().After(deadline) {
			t.Fatalf("interlink %s never got to where %s is to stop it", strings.Join(args, " "), sig)
		}
	}
	sent := time.Now()
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatalf("interlink %s never exited after %s", strings.Join(args, " "), sig)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode(), time.Since(sent)
}
