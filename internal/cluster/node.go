package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/interlink/interlink/internal/termtext"
)

// node is the state of one node during a run.
type node struct {
	t      Target
	res    *NodeResult
	client *ssh.Client
	dir    string // the run's temp dir on the node; "" before it exists
	bin    string // the interlink the node runs
	pid    int    // the agent's PID; 0 when none runs
}

// maxOutput bounds what a remote command may send back (check --json of a
// large node is a few MiB).
const maxOutput = 64 << 20

// remoteError is a command on the node that failed.
type remoteError struct {
	step string
	code int
	msg  string
}

func (e *remoteError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("%s: exit status %d", e.step, e.code)
	}
	return fmt.Sprintf("%s: %s", e.step, e.msg)
}

// run runs a shell command on the node and returns its stdout and exit
// status; a command still running when ctx ends is cut off (its session
// closed). The error is set only when the command could not be run.
func (n *node) run(ctx context.Context, cmd string, stdin io.Reader) (stdout []byte, stderr string, code int, err error) {
	s, err := n.client.NewSession()
	if err != nil {
		return nil, "", -1, fmt.Errorf("open session: %w", err)
	}
	defer s.Close()
	var out, errb limitBuf
	out.max, errb.max = maxOutput, 64<<10
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, stdin
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	err = s.Run(cmd)
	if ctx.Err() != nil {
		return out.Bytes(), errb.String(), -1, context.Cause(ctx)
	}
	var ee *ssh.ExitError
	switch {
	case errors.As(err, &ee):
		return out.Bytes(), errb.String(), ee.ExitStatus(), nil
	case err != nil:
		return out.Bytes(), errb.String(), -1, err
	case out.cut:
		return nil, "", -1, fmt.Errorf("output larger than %d bytes", maxOutput)
	}
	return out.Bytes(), errb.String(), 0, nil
}

// must runs cmd and turns a non-zero exit into an error naming step and
// the last line the command wrote to stderr.
func (n *node) must(ctx context.Context, step, cmd string, stdin io.Reader) ([]byte, error) {
	out, stderr, code, err := n.run(ctx, cmd, stdin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", step, err)
	}
	if code != 0 {
		return nil, &remoteError{step, code, lastLine(stderr)}
	}
	return out, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return termtext.Clean(strings.TrimSpace(lines[len(lines)-1]))
}

type limitBuf struct {
	bytes.Buffer
	max int
	cut bool
}

func (b *limitBuf) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.cut = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// stepper returns a function that ends the step under way (timing it in
// the node's Steps) and starts the one named; "" ends without a new one.
func (n *node) stepper(progress func(*node, string)) func(string) {
	var name string
	var t0 time.Time
	return func(next string) {
		if name != "" {
			n.res.Steps = append(n.res.Steps, Step{Name: name, Elapsed: time.Since(t0)})
		}
		name, t0 = next, time.Now()
		if next != "" {
			progress(n, next)
		}
	}
}

// fail records why the node did not get through.
func (n *node) fail(ctx context.Context, err error) {
	var re *reachError
	switch {
	case ctx.Err() != nil:
		n.res.Status, n.res.Cause = StatusStopped, ""
		err = fmt.Errorf("%v (the run stopped)", context.Cause(ctx))
	case errors.As(err, &re) && re.cause == CausePlatform:
		n.res.Status, n.res.Cause = StatusFailed, CausePlatform
	case errors.As(err, &re):
		n.res.Status, n.res.Cause = StatusUnreachable, re.cause
	default:
		n.res.Status, n.res.Cause = StatusFailed, CauseRemote
	}
	n.res.Error = err.Error()
}

// parallel calls fn(0..n-1) with at most limit calls at once.
func parallel(n, limit int, fn func(int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}
