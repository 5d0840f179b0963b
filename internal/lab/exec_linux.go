package lab

import (
	"fmt"
	"os/exec"

	"github.com/interlink/interlink/internal/osthread"
	"github.com/vishvananda/netns"
)

// Do runs fn on a locked OS thread inside the node's network namespace and
// switches the thread back afterwards. Sockets fn creates belong to the node
// and stay there when used later from any goroutine. Goroutines fn starts do
// NOT run in the node: they may run on any thread. fn may call t.Fatal.
func (n *Node) Do(fn func() error) error {
	if n.IsVM() {
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
	if n.IsVM() {
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

// notNamespace is the error of Do and Start on a VM node.
func (n *Node) notNamespace() error {
	return fmt.Errorf("lab %s: node %s is a VM with a kernel of its own, not a namespace: run commands in it with Exec (lab exec)", n.lab.Name(), n.spec.Name)
}
