package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/interlink/interlink/internal/vm"
	"github.com/interlink/interlink/internal/vm/channel"
)

// vmNode is a node that is a virtual machine with a kernel of its own
// (package vm): qemu in the lab's switch namespace, a tap there for each
// link, and a guest that configures its links and starts its services
// itself when it boots (vm.GuestConfig).
type vmNode struct{}

func (vmNode) plan(ctx context.Context, t *Topology, nodes []*NodeSpec, cfg *upConfig) error {
	var err error
	cfg.vms, err = planVMs(ctx, t, nodes, cfg.binary, cfg.log)
	return err
}

// namespace is "": the guest's links are in its own kernel.
func (vmNode) namespace(lab, node string) string { return "" }

func (vmNode) build(ctx context.Context, b *builder, nodes []*NodeSpec) error {
	return b.vms(ctx, nodes)
}

// startService does nothing: the guest started the node's services when
// it booted, before Up saw it ready.
func (vmNode) startService(context.Context, *builder, *Node, *ServiceSpec, string) error { return nil }

// stop stops the recorded qemu processes by PID (stopVMs) before Down
// kills what is left in the switch namespace, where they run.
func (vmNode) stop(st *state) error { return stopVMs(st) }

// exec runs argv in the guest (vm.Exec on its command channel). A signal
// on x.signals ends it as ctx does: the guest sends the command SIGTERM.
func (vmNode) exec(ctx context.Context, n *Node, argv, env []string, x execIO) (int, error) {
	if x.signals != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-x.signals:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	dir := n.vmDir()
	code, err := vm.Exec(ctx, filepath.Join(dir, vm.ChannelFile), channel.Command{Argv: argv, Env: env}, x.stdout, x.stderr)
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) || (err != nil && ctx.Err() == nil && !n.vmRunning()) {
		// Nothing listens on the channel, or the channel closed under
		// the command and qemu is gone (or going: a qemu that is exiting
		// still holds its socket for a while after its command line is
		// gone, which is how vmAlive tells it from a live one).
		return 0, fmt.Errorf("lab %s: node %s: its VM is not running (console: %s)", n.lab.Name(), n.spec.Name,
			filepath.Join(dir, vm.ConsoleFile))
	}
	return code, err
}

// vmDir is the VM node's directory, as the lab's state records it
// (state.vmDir).
func (n *Node) vmDir() string {
	if st, err := readState(n.lab.Name()); err == nil {
		return st.vmDir(n.spec.Name)
	}
	return nodeDir(n.lab.Name(), n.spec.Name)
}

// vmRunning reports whether the node's qemu, as recorded in the lab's
// state, runs (false too when the state cannot be read).
func (n *Node) vmRunning() bool {
	st, err := readState(n.lab.Name())
	return err == nil && st.vmRunning(n.spec.Name)
}

// inspect reads a VM node's state: its qemu and, for each link, the tap
// that is its switch port.
func (vmNode) inspect(in *inspection, n NodeSpec) NodeStatus {
	st, swh, problem := in.st, in.swh, in.problem
	out := NodeStatus{Name: n.Name, Forward: n.Forward, Links: []LinkStatus{}, Routes: append([]RouteSpec{}, n.Routes...)}
	vs := &VMStatus{State: VMStopped, MemoryBytes: n.VM.MemoryBytes, CPUs: n.VM.CPUs, Console: filepath.Join(st.vmDir(n.Name), vm.ConsoleFile)}
	for _, v := range st.VMs {
		if v.Node == n.Name {
			vs.Kernel, vs.Release, vs.Accel = v.Kernel, v.Release, v.Accel
			if vmAlive(v) {
				vs.State, vs.PID = VMRunning, v.PID
			}
		}
	}
	if st.Complete && vs.State != VMRunning {
		problem("node %s: its VM is %s (console: %s)", n.Name, vs.State, vs.Console)
	}
	out.VM = vs
	for _, l := range n.Links {
		ls := LinkStatus{Name: l.Name, Switch: l.Switch, Port: l.Port, State: "vm", MTU: l.MTU, Addresses: append([]netip.Prefix{}, l.Addresses...)}
		if swh != nil {
			if tap, err := swh.LinkByName(l.Port); err == nil {
				ls.PortMTU = min(tap.Attrs().MTU, l.PortMTU)
				ls.State = strings.ToLower(tap.Attrs().OperState.String())
				inspectPort(swh, tap, l, &ls, problem)
				if ls.PortFilter == nil && tap.Attrs().MTU != l.PortMTU {
					problem("switch port %s (tap of VM node %s) has MTU %d and no port filter, topology says %d", l.Port, n.Name, tap.Attrs().MTU, l.PortMTU)
				}
			} else {
				problem("switch port %s (tap of VM node %s link %s) is missing", l.Port, n.Name, l.Name)
			}
		}
		out.Links = append(out.Links, ls)
	}
	return out
}
