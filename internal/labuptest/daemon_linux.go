package labuptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// Log is a daemon's stderr as it arrives, safe to read while it runs.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *Log) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// Daemon starts cmd in node n and waits until a line of its stderr
// contains ready, for at most 10 s. It is killed by PID when the test ends
// (and dies with the test process); its log is printed if the test failed.
// what names it in messages ("agent", "sshd").
func Daemon(t testing.TB, n *lab.Node, cmd *exec.Cmd, what, ready string) (*Log, int) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := n.Start(cmd); err != nil {
		t.Fatalf("start %s in %s: %v", what, n.Name(), err)
	}
	log := &Log{}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(up) })
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		cmd.Process.Kill() // by PID
		<-exited
		if t.Failed() {
			t.Logf("%s log of %s:\n%s", what, n.Name(), log)
		}
	})
	select {
	case <-up:
	case err := <-exited:
		exited <- err
		t.Fatalf("%s in %s exited: %v\n%s", what, n.Name(), err, log)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s in %s not ready after 10s:\n%s", what, n.Name(), log)
	}
	return log, cmd.Process.Pid
}

// Exec runs cmd in node n to its end (killed after limit) and returns its
// output and exit code, logging both. cmd.Stdout and cmd.Stderr are set
// here; a failure to start or wait fails the test.
func Exec(t testing.TB, n *lab.Node, cmd *exec.Cmd, limit time.Duration) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		t.Fatalf("start %s in %s: %v", strings.Join(cmd.Args, " "), n.Name(), err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s in %s: %v", strings.Join(cmd.Args, " "), n.Name(), err)
	}
	t.Logf("%s$ %s  (exit %d)\n%s%s", n.Name(), strings.Join(cmd.Args, " "), code, out.String(), errb.String())
	return out.String(), errb.String(), code
}
