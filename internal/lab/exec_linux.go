package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/vishvananda/netns"

	"github.com/interlink/interlink/internal/osthread"
)

// Exec runs argv in the node with INTERLINK_LAB and INTERLINK_NODE added
// to its environment, its output to stdout and stderr, and returns its
// exit code (128+N when a signal N ended it). When ctx is done the command
// gets SIGTERM. In a namespace node it runs as Start runs it, and gets
// SIGKILL if this process dies (it is never left running on its own); in
// a VM node it runs in the guest, through the guest's serial command
// channel (vm.Exec), and reads /dev/null. opts give it a standard input
// and signals to pass on.
func (n *Node) Exec(ctx context.Context, argv []string, stdout, stderr io.Writer, opts ...ExecOption) (int, error) {
	x := execIO{stdout: stdout, stderr: stderr}
	for _, o := range opts {
		o(&x)
	}
	return kindOf(n.spec).exec(ctx, n, argv, n.environ(), x)
}

// execInNamespace is Exec in a namespace node.
func execInNamespace(ctx context.Context, n *Node, argv, env []string, x execIO) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if x.stdin != nil {
		// The file itself: a terminal stays the command's terminal.
		cmd.Stdin = x.stdin
	}
	cmd.Stdout, cmd.Stderr = x.stdout, x.stderr
	cmd.Env = append(os.Environ(), env...)
	// The signal fires when the thread that forked the child exits, and
	// Start keeps that thread until the child exits: never orphaned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		ctxDone := ctx.Done()
		for {
			select {
			case s := <-x.signals:
				cmd.Process.Signal(s)
			case <-ctxDone:
				cmd.Process.Signal(syscall.SIGTERM)
				ctxDone = nil
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// Do runs fn on a locked OS thread inside the node's network namespace and
// switches the thread back afterwards. Sockets fn creates belong to the node
// and stay there when used later from any goroutine. Goroutines fn starts do
// NOT run in the node: they may run on any thread. fn may call t.Fatal.
func (n *Node) Do(fn func() error) error {
	if n.ns == "" {
		return n.notNamespace()
	}
	h, err := netns.GetFromPath(nsPath(n.ns))
	if err != nil {
		return fmt.Errorf("lab %s: node %s: open namespace: %w", n.lab.Name(), n.spec.Name, err)
	}
	defer h.Close()
	return inNS(h, fn)
}

// Start starts cmd inside the node, as `ip netns exec` does: in the node's
// network namespace and in a mount namespace of its own where /sys is
// sysfs mounted from inside the node, so /sys/class/net and /proc/net show
// the node's interfaces. The caller Waits for cmd. It works from any
// process with the privilege (a test binary, the CLI). If cmd sets
// SysProcAttr.Pdeathsig, the signal comes when this process ends.
func (n *Node) Start(cmd *exec.Cmd) error {
	if n.ns == "" {
		return n.notNamespace()
	}
	h, err := netns.GetFromPath(nsPath(n.ns))
	if err != nil {
		return fmt.Errorf("lab %s: node %s: open namespace: %w", n.lab.Name(), n.spec.Name, err)
	}
	errc := make(chan error, 1)
	osthread.Spent(func() { n.startIn(h, cmd, errc) })
	return <-errc
}

// startIn enters the node on the calling goroutine's thread (a spent
// thread), starts cmd and says how that went on errc; with a parent-death
// signal it then keeps the thread until the child exits.
func (n *Node) startIn(h netns.NsHandle, cmd *exec.Cmd, errc chan<- error) {
	defer h.Close()
	if err := enterNode(h); err != nil {
		errc <- fmt.Errorf("lab %s: node %s: %w", n.lab.Name(), n.spec.Name, err)
		return
	}
	if err := cmd.Start(); err != nil {
		errc <- err
		return
	}
	errc <- nil
	// A child's parent-death signal fires when the thread that forked it
	// ends: keep this thread until the child exits.
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		waitExit(cmd.Process.Pid)
	}
}

// notNamespace is the error of Do and Start on a node without a
// namespace here (a VM node).
func (n *Node) notNamespace() error {
	return fmt.Errorf("lab %s: node %s is a VM with a kernel of its own, not a namespace: run commands in it with Exec (lab exec)", n.lab.Name(), n.spec.Name)
}
