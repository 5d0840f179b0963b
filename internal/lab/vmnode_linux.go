package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/interlink/interlink/internal/lab/service"
	"github.com/interlink/interlink/internal/osthread"
	"github.com/interlink/interlink/internal/vm"
	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/guest"
)

// VMBootTimeout bounds how long Up waits for a VM node's guest to come up
// (its links configured, its agent answering). Software emulation on a
// busy machine of two cores boots three guests in about a minute.
var VMBootTimeout = 3 * time.Minute

// vmPlan is what Up settled for the VM nodes before building anything.
type vmPlan struct {
	kernels  map[string]*cache.Kernel // by node
	accel    string
	why      string
	bin      string
	memBytes int64
	sshd     string // cache.DebianSSHD's directory, when a VM node runs sshd
}

// planVMs checks what the VM nodes need and finds their kernels (fetching
// Debian's into the cache once) before anything is built: qemu, the
// memory they ask for against MemAvailable, each kernel (a bzImage, virtio
// modules), the accelerator. nodes are t's VM nodes; nil when there are
// none.
func planVMs(ctx context.Context, t *Topology, nodes []*NodeSpec, bin string, log io.Writer) (*vmPlan, error) {
	p := &vmPlan{kernels: map[string]*cache.Kernel{}, bin: bin}
	var first *cache.Kernel
	for _, n := range nodes {
		if p.memBytes == 0 {
			if _, err := exec.LookPath(vm.Qemu); err != nil {
				return nil, fmt.Errorf("lab %s: node %s is a VM: %s not found (apt-get install qemu-system-x86 busybox-static)", t.Name, n.Name, vm.Qemu)
			}
		}
		if p.memBytes == 0 {
			// Root boots what the cache holds: refuse one others can write.
			if _, err := cache.Dir(); err != nil {
				return nil, fmt.Errorf("lab %s: %w", t.Name, err)
			}
		}
		p.memBytes += n.VM.MemoryBytes
		var k *cache.Kernel
		var err error
		if n.VM.Kernel == "" {
			k, err = cache.DebianKernel(ctx, log)
		} else {
			k, err = cache.UserKernel(n.VM.Kernel, n.VM.Modules)
		}
		if err != nil {
			return nil, fmt.Errorf("lab %s: node %s: %w", t.Name, n.Name, err)
		}
		p.kernels[n.Name] = k
		if first == nil {
			first = k
		}
	}
	if first == nil {
		return nil, nil
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", t.Name, err)
	}
	avail, err := vm.MemAvailable(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", t.Name, err)
	}
	if p.memBytes > avail {
		return nil, fmt.Errorf("lab %s: the VM nodes ask for %d MiB of memory, the host has %d MiB available (MemAvailable)", t.Name, p.memBytes>>20, avail>>20)
	}
	if p.bin == "" {
		if p.bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("lab %s: %w", t.Name, err)
		}
	}
	for _, n := range nodes {
		if n.Service(KindSSHD) != nil {
			if p.sshd, err = cache.DebianSSHD(ctx, log); err != nil {
				return nil, fmt.Errorf("lab %s: node %s: %w", t.Name, n.Name, err)
			}
			break
		}
	}
	p.accel, p.why = vm.Accel(ctx, first)
	return p, nil
}

// vms boots the VM nodes: for each, its initramfs, a tap per link on the
// link's switch (named as the switch port, with the port MTU), and qemu in
// the switch namespace, where it finds its taps; each recorded before its
// taps and again with qemu's PID. Then it waits for every guest.
func (b *builder) vms(ctx context.Context, nodes []*NodeSpec) error {
	t, p := b.t, b.cfg.vms
	if p == nil {
		return nil
	}
	// qemu runs as a user of its own (vm.Boot), which passes LAB.d and
	// LAB.d/nodes on its way to the node's directory.
	if err := os.MkdirAll(labDir(t.Name), 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	if err := passableDir(nodesDir(t.Name)); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	token := ""
	if t.HasServices() {
		if !fileExists(tokenFile(t.Name)) {
			if err := service.NewToken(tokenFile(t.Name)); err != nil {
				return fmt.Errorf("lab %s: %w", t.Name, err)
			}
		}
		data, err := os.ReadFile(tokenFile(t.Name))
		if err != nil {
			return fmt.Errorf("lab %s: %w", t.Name, err)
		}
		token = string(data)
	}
	macs := map[string]bool{}
	var machines []*vm.Machine
	var names []string
	for _, n := range nodes {
		m, err := b.vm(ctx, n, p, token, macs)
		if err != nil {
			return err
		}
		machines = append(machines, m)
		names = append(names, n.Name)
	}
	for i, m := range machines {
		if err := m.WaitReady(ctx, t.Name+"."+names[i], VMBootTimeout); err != nil {
			return fmt.Errorf("lab %s: %w", t.Name, err)
		}
		if m.ServesStatus() {
			for j := range b.st.VMs {
				if b.st.VMs[j].Node == names[i] {
					b.st.VMs[j].Status = m.Status
				}
			}
		}
	}
	return b.writeState(ctx)
}

func (b *builder) vm(ctx context.Context, n *NodeSpec, p *vmPlan, token string, macs map[string]bool) (*vm.Machine, error) {
	t := b.t
	k := p.kernels[n.Name]
	dir := nodeDir(t.Name, n.Name)
	b.st.VMs = append(b.st.VMs, vmState{Node: n.Name, Dir: dir, Kernel: k.Source, Release: k.Release, Accel: p.accel})
	rec := &b.st.VMs[len(b.st.VMs)-1]
	for _, l := range n.Links {
		rec.Taps = append(rec.Taps, l.Port)
	}
	if err := b.writeState(ctx); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lab %s: %w", t.Name, err)
	}
	cfg := &guest.Config{Lab: t.Name, Node: n.Name, Forward: n.Forward, Nonce: vm.NewNonce()}
	spec := &vm.Spec{Name: t.Name + "." + n.Name, Kernel: k, Initramfs: filepath.Join(dir, "initramfs"),
		MemoryBytes: n.VM.MemoryBytes, CPUs: n.VM.CPUs, Dir: dir, Accel: p.accel, Nonce: cfg.Nonce, InTaps: b.inSwitches}
	for _, l := range n.Links {
		mac := vmMAC(t.Name, n.Name, l.Name, macs)
		cfg.Links = append(cfg.Links, guest.Link{Name: l.Name, MAC: mac, MTU: l.MTU, Addresses: l.Addresses})
		spec.NICs = append(spec.NICs, vm.NIC{Tap: l.Port, MAC: mac, MTU: l.MTU})
	}
	for _, r := range n.Routes {
		cfg.Routes = append(cfg.Routes, guest.Route{To: r.To, Via: r.Via})
	}
	if s := n.Service(KindAgent); s != nil {
		cfg.AgentPort, cfg.AgentToken = s.Port, token
	}
	if n.Service(KindSSHD) != nil {
		hostKey, authorized, err := sshKeys(t.Name, n)
		if err != nil {
			return nil, fmt.Errorf("lab %s: node %s: %w", t.Name, n.Name, err)
		}
		cfg.SSHD = &guest.SSHD{HostKey: hostKey, Authorized: authorized + "\n", Files: p.sshd}
	}
	if err := vm.WriteInitramfs(spec.Initramfs, k, p.bin, cfg); err != nil {
		return nil, fmt.Errorf("lab %s: node %s: %w", t.Name, n.Name, err)
	}
	if err := b.taps(n); err != nil {
		return nil, err
	}
	m, err := vm.Boot(spec)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", t.Name, err)
	}
	rec.PID = m.PID
	if err := b.writeState(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// taps makes a VM node's switch ports: persistent taps in the switch
// namespace (qemu opens them by name there), on their bridges, up. As a
// veth port (build_linux.go), a tap gets the larger of the two MTUs and,
// when they differ, the port filter that drops larger frames silently in
// both directions: a tap at 1500 would otherwise make the bridge follow it
// down to 1500, and would let a guest's larger frames in.
func (b *builder) taps(n *NodeSpec) error {
	h := b.ns[switchNS(b.t.Name)]
	return inNS(h, func() error {
		for _, l := range n.Links {
			br, err := netlink.LinkByName(l.Switch)
			if err != nil {
				return fmt.Errorf("lab %s: switch %s: %w", b.t.Name, l.Switch, err)
			}
			mtu := max(l.PortMTU, l.MTU)
			tap := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: l.Port, MTU: mtu},
				Mode: netlink.TUNTAP_MODE_TAP, Flags: netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR}
			if err := netlink.LinkAdd(tap); err != nil {
				return fmt.Errorf("lab %s: node %s: tap %s: %w", b.t.Name, n.Name, l.Port, err)
			}
			link, err := netlink.LinkByName(l.Port)
			if err == nil {
				err = netlink.LinkSetMTU(link, mtu)
			}
			if err == nil {
				err = filterPort(b.t, b.nl[switchNS(b.t.Name)], link, l)
			}
			if err == nil {
				err = netlink.LinkSetMaster(link, br)
			}
			if err == nil {
				err = netlink.LinkSetUp(link)
			}
			if err != nil {
				return fmt.Errorf("lab %s: node %s: tap %s: %w", b.t.Name, n.Name, l.Port, err)
			}
		}
		return nil
	})
}

// inSwitches runs fn (which opens a VM's taps and starts its qemu) in the
// lab's switch namespace, on a thread that is never used again.
func (b *builder) inSwitches(fn func() error) error {
	h := b.ns[switchNS(b.t.Name)]
	errc := make(chan error, 1)
	osthread.Spent(func() {
		if err := netns.Set(h); err != nil {
			errc <- fmt.Errorf("enter %s: %w", switchNS(b.t.Name), err)
			return
		}
		errc <- fn()
	})
	return <-errc
}

// stopVMs stops the recorded qemu processes (SIGTERM, then SIGKILL after
// 3 s) by PID, each only if it still is the lab's qemu.
func stopVMs(st *state) error {
	var errs []error
	for _, v := range st.VMs {
		if !vmAlive(v) {
			continue
		}
		syscall.Kill(v.PID, syscall.SIGTERM)
		deadline := time.Now().Add(3 * time.Second)
		for vmAlive(v) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if vmAlive(v) {
			syscall.Kill(v.PID, syscall.SIGKILL)
			for i := 0; i < 100 && vmAlive(v); i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if vmAlive(v) {
			errs = append(errs, fmt.Errorf("node %s: qemu %d survives SIGKILL", v.Node, v.PID))
		}
	}
	return errors.Join(errs...)
}

// vmAlive reports whether the VM's qemu runs: its PID, not a zombie, with
// the VM's directory on its command line (a PID reused by another
// process does not count).
func vmAlive(v vmState) bool { return service.Alive(v.PID, v.Dir) }
