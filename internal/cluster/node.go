package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/interlink/interlink/internal/termtext"
)

// node is the state of one node during a run.
type node struct {
	t       Target
	res     *NodeResult
	link    *link         // nil until SSH connected
	connect time.Duration // SSH connect and handshake timeout
	stall   time.Duration // a transfer standing still this long is cut off
	// note is how long a transfer must have stood still, when the run
	// ends first, to be reported as a stall (0: stallNote). A field so a
	// test can wait less than stallNote for the same check.
	note time.Duration
	// grace is how long the cleanup gives the agent between TERM and KILL
	// (0: termGrace), a field for the same reason.
	grace time.Duration
	dir   string // the run's temp dir on the node; "" before it exists
	bin   string // the interlink the node runs
	pid   int    // the agent's PID; 0 when none runs
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
// status. When ctx ends first, the node's link is cut (the TCP connection
// closed, which ends whatever SSH is blocked on) and the error is
// context.Cause(ctx). A transfer x (nil for none) is watched: when it
// stands still for n.stall, the link is cut and the error is a
// *stallError. The error is set only when the command could not be run.
func (n *node) run(ctx context.Context, cmd string, x *transfer) (stdout []byte, stderr string, code int, err error) {
	l := n.link
	var out, errb limitBuf
	out.max, errb.max = maxOutput, 64<<10
	defer func() { // after the cut's stop below: a cut under way has finished
		switch {
		case ctx.Err() != nil:
			err = context.Cause(ctx)
			if x != nil && x.endedStill() != nil {
				err = x.endedStill()
			}
		case l.cutBy() != nil:
			err = l.cutBy()
		case l.lostBy() != nil:
			err = l.lostBy()
		default:
			return
		}
		stdout, stderr, code = out.Bytes(), errb.String(), -1
	}()
	defer cutOnEnd(ctx, func(cause error) {
		if x != nil {
			x.end(cause, min(n.stillNote(), n.stall))
		}
	}, l)()
	s, err := l.NewSession()
	if err != nil {
		return nil, "", -1, fmt.Errorf("open session: %w", err)
	}
	defer s.Close()
	s.Stdout, s.Stderr = &out, &errb
	if x != nil {
		if x.in != nil {
			s.Stdin = x
		} else {
			s.Stdout = x.output(&out)
		}
		defer x.watch(n.stall)()
	}
	err = s.Run(cmd)
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

// stillNote is n.note, or stallNote when it is not set.
func (n *node) stillNote() time.Duration {
	if n.note > 0 {
		return n.note
	}
	return stallNote
}

// must runs cmd, with in as its stdin when not nil (a transfer), and
// turns a non-zero exit into an error naming step and the last line the
// command wrote to stderr.
func (n *node) must(ctx context.Context, step, cmd string, in []byte) ([]byte, error) {
	var x *transfer
	if in != nil {
		x = newTransfer(step, in, n.link)
	}
	return n.mustRun(ctx, step, cmd, x)
}

// mustRun is must with the transfer, if any, given.
func (n *node) mustRun(ctx context.Context, step, cmd string, x *transfer) ([]byte, error) {
	out, stderr, code, err := n.run(ctx, cmd, x)
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

// dial makes a link to the node; notes say which keys were skipped.
func (n *node) dial(ctx context.Context) (*link, []string, error) {
	keys, notes, closeAgent := signers(n.t.Identities)
	defer closeAgent()
	// The ssh-agent signs during the handshake: one that hangs must not
	// hold the dial past the run's end.
	defer context.AfterFunc(ctx, closeAgent)()
	l, err := dialSSH(ctx, n.t, keys, n.connect, n.stall)
	return l, notes, err
}

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
	var se *stallError
	var le *lostError
	if errors.As(err, &se) {
		n.res.Stall = &se.Stall
	}
	switch {
	case ctx.Err() != nil:
		n.res.Status, n.res.Cause = StatusStopped, ""
		if se == nil {
			err = fmt.Errorf("%v (the run stopped)", context.Cause(ctx))
		}
	case se != nil:
		n.res.Status, n.res.Cause = StatusFailed, CauseStall
	case errors.As(err, &le):
		n.res.Status, n.res.Cause = StatusFailed, CauseNetwork
	case errors.As(err, &re) && re.cause == CausePlatform:
		n.res.Status, n.res.Cause = StatusFailed, CausePlatform
	case errors.As(err, &re):
		n.res.Status, n.res.Cause = StatusUnreachable, re.cause
	default:
		n.res.Status, n.res.Cause = StatusFailed, CauseRemote
	}
	n.res.Error = err.Error()
}
