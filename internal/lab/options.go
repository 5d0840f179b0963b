package lab

import (
	"context"
	"io"
	"os"
	"syscall"
	"time"
)

// Points of Up where a hook (WithHook) runs.
const (
	// PointState: a new record of the lab is written to NAME.json.tmp and
	// not yet renamed to NAME.json.
	PointState = "state"
	// PointNamespace: one more namespace was created.
	PointNamespace = "namespace"
	// PointLink: one more link (veth pair) was created.
	PointLink = "link"
	// PointService: one more service is recorded and about to start (n
	// from 1), or, at n = services+1, every service has started.
	PointService = "service"
)

// UpOption changes how Up builds a lab. Up without options is what
// `interlink lab up` does; the options exist for tests.
type UpOption func(*upConfig)

type upConfig struct {
	hook   func(ctx context.Context, at string, n int) error
	status **Status
	binary string
	// vms is settled by Up before it builds (vmnode_linux.go); log is
	// where Up says what takes long (fetching a kernel).
	vms *vmPlan
	log io.Writer
}

// WithBinary names the interlink binary that agent services run (default:
// this process's executable, which is interlink itself except in tests).
func WithBinary(path string) UpOption {
	return func(c *upConfig) { c.binary = path }
}

// WithLog makes Up say on w what takes long before it builds (fetching a
// VM node's kernel into the cache).
func WithLog(w io.Writer) UpOption {
	return func(c *upConfig) { c.log = w }
}

// WithStatus makes Up read the lab back from the kernel (as Inspect does)
// into *dst before it lets go of the name, so what `lab up` prints is the
// lab it built even when another process replaces it right after. *dst
// stays nil when reading back failed (the lab is up all the same).
func WithStatus(dst **Status) UpOption {
	return func(c *upConfig) { c.status = dst }
}

// WithHook makes Up call fn at every point named by a Point constant, with
// n counting how often Up reached that point (from 1). An error from fn ends
// Up as a failure there would (and Up removes what it made). Tests use it to
// stop a process at a known moment and kill it.
func WithHook(fn func(ctx context.Context, at string, n int) error) UpOption {
	return func(c *upConfig) { c.hook = fn }
}

// DownOption changes how Down ends the processes in a lab. Down without
// options is what `interlink lab down` does; the options exist for tests.
type DownOption func(*downConfig)

type downConfig struct {
	signal func(pid int, sig syscall.Signal) error // nil: kill(2)
	grace  time.Duration                           // SIGTERM to SIGKILL
	reap   time.Duration                           // SIGKILL to reporting survivors
}

func newDownConfig(opts []DownOption) downConfig {
	c := downConfig{grace: 2 * time.Second, reap: time.Second} // signal nil: kill(2)
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithSignal makes Down deliver its signals through fn instead of kill(2).
// A test uses it to make a process survive and see Down report it.
func WithSignal(fn func(pid int, sig syscall.Signal) error) DownOption {
	return func(c *downConfig) { c.signal = fn }
}

// WithGrace sets how long Down waits for the lab's processes to exit after
// SIGTERM before it sends SIGKILL (default 2s), and after SIGKILL before it
// reports the survivors (default 1s).
func WithGrace(term, kill time.Duration) DownOption {
	return func(c *downConfig) { c.grace, c.reap = term, kill }
}

// ExecOption changes how Node.Exec runs a command. Without options the
// command reads /dev/null and gets SIGTERM only when ctx is done.
type ExecOption func(*execIO)

// execIO is where a command Node.Exec runs reads and writes, and the
// signals it is to get.
type execIO struct {
	stdin          *os.File
	stdout, stderr io.Writer
	signals        <-chan os.Signal
}

// WithStdin gives the command f as its standard input, as it is (a
// terminal stays one). A VM node's command reads /dev/null all the same:
// its serial command channel carries no input.
func WithStdin(f *os.File) ExecOption {
	return func(c *execIO) { c.stdin = f }
}

// WithSignals passes every signal that arrives on ch on to the command
// while it runs (lab exec passes SIGTERM and SIGHUP). A VM node's command
// gets SIGTERM for any of them, as for ctx being done.
func WithSignals(ch <-chan os.Signal) ExecOption {
	return func(c *execIO) { c.signals = ch }
}
