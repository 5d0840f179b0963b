//go:build linux

package labtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// TestConcurrentUp: while one process builds a lab, a second `lab up` (or
// `lab down`) of the same name is refused at once with one line naming the
// builder, exit 3, and changes nothing; two `lab up` started together end
// with one lab, up and undamaged.
func TestConcurrentUp(t *testing.T) {
	dir := privateDir(t)
	name := prefix + "-busy"
	t.Cleanup(func() { lab.Down(name) })
	h := startPaused(t, name, lab.PointLink, 2)
	record, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	nsBefore := labNamespaces(t)
	want := fmt.Sprintf("interlink: lab %s is being built by PID %d\n", name, h.Process.Pid)
	// The builder stays paused: a command that waited for it would never
	// answer (run's guard ends it with exit -1).
	for _, args := range [][]string{{"lab", "up", "jumbo", "--name", name}, {"lab", "down", name}} {
		r := run(t, args...)
		if r.code != 3 || r.stdout != "" || r.stderr != want {
			t.Errorf("%v while another builds: exit %d, stdout %q, stderr %q; want exit 3 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(dir, name+".json")); !bytes.Equal(now, record) {
		t.Errorf("the refused commands changed the lab's record:\nbefore %s\nafter %s", record, now)
	}
	if now := labNamespaces(t); !slices.Equal(now, nsBefore) {
		t.Errorf("the refused commands changed the namespaces: %v -> %v", nsBefore, now)
	}
	killHelper(h)

	// Two real `lab up` at once, three times: each either builds (exit 0,
	// the lab it prints is up) or is refused in one line; one lab remains.
	busy := regexp.MustCompile(`^interlink: lab ` + name + ` is being built by PID \d+\n$`)
	for round := range 3 {
		var wg sync.WaitGroup
		var rs [2]result
		var errs [2]error
		for i := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs[i], errs[i] = runErr("lab", "up", "jumbo", "--name", name)
			}()
		}
		wg.Wait()
		built := 0
		for i, r := range rs {
			switch {
			case errs[i] != nil:
				t.Errorf("round %d: %v", round, errs[i])
			case r.code == 0 && strings.Contains(r.stdout, name+": up (") && !strings.Contains(r.stdout, "problem:"):
				built++
			case r.code == 3 && r.stdout == "" && busy.MatchString(r.stderr):
			default:
				t.Errorf("round %d: concurrent lab up: exit %d, stdout %q, stderr %q", round, r.code, r.stdout, r.stderr)
			}
		}
		if built == 0 {
			t.Errorf("round %d: neither concurrent lab up built the lab", round)
		}
		if r := run(t, "lab", "status", name); r.code != 0 || strings.Contains(r.stdout, "problem:") {
			t.Errorf("round %d: status after concurrent ups: exit %d\n%s%s", round, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("down: exit %d: %s", r.code, r.stderr)
	}
	nothingLeft(t, name, dir)
}

// runErr is run for goroutines: it returns what went wrong instead of
// failing the test.
func runErr(args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		return r, fmt.Errorf("interlink %s: %v", strings.Join(args, " "), err)
	}
	return r, nil
}

// TestUpBadNameChangesNothing: `lab up jumbo --name ”` (or a name the
// kernel would refuse) is an error before anything is read or built; it
// used to build the file's lab under the file's name, replacing a lab of
// that name. The lab named in the file stays as it was.
func TestUpBadNameChangesNothing(t *testing.T) {
	dir := privateDir(t)
	file := filepath.Join(t.TempDir(), "named.yaml")
	name := prefix + "-named"
	text := "name: " + name + "\nswitches: {ic: {mtu: 9000}}\nnodes:\n  n1: {links: [{switch: ic, address: 198.18.40.1/24}]}\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Down(name) })
	if r := run(t, "lab", "up", file); r.code != 0 {
		t.Fatalf("up %s: exit %d: %s", file, r.code, r.stderr)
	}
	record, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "Bad!", "x.y", strings.Repeat("a", 25)} {
		r := run(t, "lab", "up", file, "--name", bad)
		if r.code != 3 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "interlink: lab up: --name ") {
			t.Errorf("up --name %q: exit %d, stdout %q, stderr %q; want exit 3 and one line about --name", bad, r.code, r.stdout, r.stderr)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(dir, name+".json")); !bytes.Equal(now, record) {
		t.Errorf("a refused --name changed lab %s", name)
	}
	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("down: %s", r.stderr)
	}
	nothingLeft(t, name, dir)
}

// TestDownReportsSurvivors: a process in the lab that outlives SIGKILL is
// named by Down, which leaves the lab recorded; once it is gone, Down
// finishes. (A real process, made to "survive" by a signal function that
// spares it, as a process stuck in the kernel would.)
func TestDownReportsSurvivors(t *testing.T) {
	dir := privateDir(t)
	l := up(t, "jumbo", "survivor")
	cmd := exec.Command("sleep", "60")
	if err := node(t, l, "node2").Start(cmd); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	spare := lab.WithSignal(func(p int, sig syscall.Signal) error {
		if p == pid {
			return nil
		}
		return syscall.Kill(p, sig)
	})
	err := lab.Down(l.Name(), spare, lab.WithGrace(100*time.Millisecond, 100*time.Millisecond))
	want := fmt.Sprintf("%d (sleep) in il-%s.node2", pid, l.Name())
	if !errors.Is(err, lab.ErrSurvivors) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Down with a surviving process: %v; want ErrSurvivors naming %q", err, want)
	}
	if _, err := lab.Open(l.Name()); err != nil {
		t.Errorf("the lab is no longer recorded after Down could not end its processes: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := lab.Down(l.Name()); err != nil {
		t.Fatalf("Down once the process is gone: %v", err)
	}
	nothingLeft(t, l.Name(), dir)
}

// TestExecChildDiesWithWrapper: the command `lab exec` starts dies when
// interlink is killed with SIGKILL, instead of running on as an orphan.
func TestExecChildDiesWithWrapper(t *testing.T) {
	privateDir(t)
	name := prefix + "-orphan"
	t.Cleanup(func() { lab.Down(name) })
	if r := run(t, "lab", "up", "jumbo", "--name", name); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	cmd := exec.Command(binary, "lab", "exec", name, "node1", "--", "sh", "-c", "echo $$; exec sleep 60")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killHelper(cmd) })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("lab exec printed %q, want the child's PID", line)
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
		if string(comm) == "sleep\n" {
			break
		}
		if time.Since(start) > 60*time.Second { // only against a hang
			t.Fatalf("PID %d is %q, want the sleep lab exec started", child, comm)
		}
	}
	killHelper(cmd) // SIGKILL
	// Only against a hang.
	deadline := time.Now().Add(60 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the child of a killed lab exec (PID %d) never ended", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
