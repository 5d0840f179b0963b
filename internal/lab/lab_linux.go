package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// pauseEnv is a test hook: when set to N, Up stops after N creation steps
// (namespaces and links), says so on stderr and waits for its context to
// end, so a test can SIGKILL `lab up` at a known point.
const pauseEnv = "INTERLINK_LAB_TEST_PAUSE_AFTER"

// CheckPrivilege returns ErrPrivilege unless this process has CAP_NET_ADMIN
// and CAP_SYS_ADMIN (namespaces and mounts need the latter).
func CheckPrivilege() error {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return fmt.Errorf("lab: %w (cannot read capabilities: %v)", ErrPrivilege, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				break
			}
			need := uint64(1)<<unix.CAP_NET_ADMIN | uint64(1)<<unix.CAP_SYS_ADMIN
			if caps&need != need {
				return fmt.Errorf("lab: %w", ErrPrivilege)
			}
			return nil
		}
	}
	return fmt.Errorf("lab: %w (no CapEff in /proc/self/status)", ErrPrivilege)
}

// lock serialises Up and Down of one lab name across processes. The kernel
// drops the lock when the process dies, so a killed `lab up` never leaves
// the name locked. unlock(true) also removes the lock file (Down does, so no
// files stay behind); a process that locked a file just removed tries again
// with the new one.
func lock(name string) (unlock func(remove bool), err error) {
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lab %s: state dir: %w", name, err)
	}
	path := lockPath(name)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lab %s: lock: %w", name, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lab %s: lock: %w", name, err)
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
			return func(remove bool) {
				if remove {
					os.Remove(path)
				}
				f.Close()
			}, nil
		}
		f.Close()
	}
}

// Up builds the lab t describes, after t.Validate. A lab of the same name
// (complete, or left over by a crash) is removed first. On failure Up removes everything it made
// and returns the error; no state is left behind.
func Up(ctx context.Context, t *Topology) (*Lab, error) {
	if err := CheckPrivilege(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	unlock, err := lock(t.Name)
	if err != nil {
		return nil, err
	}
	built := false
	defer func() { unlock(!built) }() // a failed Up leaves no lab, so no lock file
	if err := down(t.Name); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("lab %s: remove the previous lab: %w", t.Name, err)
	}
	b := &builder{
		t:  t,
		st: &state{Name: t.Name, Topology: t, PID: os.Getpid(), Created: time.Now().UTC()},
		ns: map[string]netns.NsHandle{}, nl: map[string]*netlink.Handle{},
	}
	if s := os.Getenv(pauseEnv); s != "" {
		b.pauseAfter, _ = strconv.Atoi(s)
	}
	err = b.build(ctx)
	b.close()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("lab %s: interrupted, removing what was built: %w", t.Name, ctx.Err())
	}
	if err != nil {
		if derr := down(t.Name); derr != nil && !errors.Is(derr, ErrNotFound) {
			err = fmt.Errorf("%w (and cleanup failed: %v; run 'interlink lab down %s')", err, derr, t.Name)
		}
		return nil, err
	}
	built = true
	return newLab(t), nil
}

// builder holds the open namespaces and netlink handles while Up runs.
type builder struct {
	t          *Topology
	st         *state
	ns         map[string]netns.NsHandle
	nl         map[string]*netlink.Handle
	steps      int
	pauseAfter int
}

func (b *builder) close() {
	for _, h := range b.nl {
		h.Close()
	}
	for _, h := range b.ns {
		h.Close()
	}
}

// step counts creation steps for the pause test hook.
func (b *builder) step(ctx context.Context) error {
	b.steps++
	if b.pauseAfter > 0 && b.steps == b.pauseAfter {
		fmt.Fprintf(os.Stderr, "lab %s: paused after %d steps (%s)\n", b.t.Name, b.steps, pauseEnv)
		<-ctx.Done()
	}
	return ctx.Err()
}

func (b *builder) build(ctx context.Context) error {
	name := b.t.Name
	if err := prepareNetnsDir(); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	if err := b.st.write(); err != nil {
		return err
	}
	all := []string{switchNS(name)}
	for _, n := range b.t.Nodes {
		all = append(all, nodeNS(name, n.Name))
	}
	for _, ns := range all {
		// Record before creating, so a kill between the two still leaves a
		// record that covers the namespace.
		b.st.Namespaces = append(b.st.Namespaces, ns)
		if err := b.st.write(); err != nil {
			return err
		}
		h, err := createNS(ns)
		if err != nil {
			return fmt.Errorf("lab %s: create namespace %s: %w", name, ns, err)
		}
		b.ns[ns] = h
		nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("lab %s: netlink in %s: %w", name, ns, err)
		}
		b.nl[ns] = nh
		if err := b.step(ctx); err != nil {
			return err
		}
	}
	if err := b.switches(); err != nil {
		return err
	}
	for i := range b.t.Nodes {
		if err := b.node(ctx, &b.t.Nodes[i]); err != nil {
			return err
		}
	}
	b.st.Complete = true
	return b.st.write()
}

// switches creates the bridges in the lab's switch namespace.
func (b *builder) switches() error {
	ns := switchNS(b.t.Name)
	// The switch namespace only bridges frames: no IPv6 link-local
	// addresses, router solicitations or DAD on its ports.
	err := inNS(b.ns[ns], func() error {
		err := writeSysctls(map[string]string{
			"net/ipv6/conf/all/disable_ipv6":     "1",
			"net/ipv6/conf/default/disable_ipv6": "1",
		})
		if err != nil {
			return err
		}
		// A switch switches: with br_netfilter, bridged frames would pass
		// through netfilter (and its defragmentation) unless told not to.
		if _, serr := os.Stat("/proc/sys/net/bridge"); serr == nil {
			err = writeSysctls(map[string]string{
				"net/bridge/bridge-nf-call-iptables":  "0",
				"net/bridge/bridge-nf-call-ip6tables": "0",
				"net/bridge/bridge-nf-call-arptables": "0",
			})
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("lab %s: switch namespace sysctls: %w", b.t.Name, err)
	}
	h := b.nl[ns]
	off := false
	for _, sw := range b.t.Switches {
		// No multicast snooping: a switch that floods multicast keeps IPv6
		// neighbour discovery working from the first packet.
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: sw.Name, MTU: sw.MTU}, MulticastSnooping: &off}
		if err := h.LinkAdd(br); err != nil {
			return fmt.Errorf("lab %s: create switch %s: %w", b.t.Name, sw.Name, err)
		}
		// Setting the MTU explicitly pins it: otherwise the bridge follows
		// its smallest port and a port_mtu would change the switch.
		if err := h.LinkSetMTU(br, sw.MTU); err != nil {
			return fmt.Errorf("lab %s: switch %s: set MTU %d: %w", b.t.Name, sw.Name, sw.MTU, err)
		}
		if err := h.LinkSetUp(br); err != nil {
			return fmt.Errorf("lab %s: switch %s: up: %w", b.t.Name, sw.Name, err)
		}
	}
	return nil
}

func boolSysctl(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

func (b *builder) node(ctx context.Context, n *NodeSpec) error {
	name := b.t.Name
	ns := nodeNS(name, n.Name)
	// Forwarding is set either way: a new namespace may inherit the host's
	// ip_forward. DAD is off so addresses work at once.
	err := inNS(b.ns[ns], func() error {
		return writeSysctls(map[string]string{
			"net/ipv4/ip_forward":                        boolSysctl(n.Forward),
			"net/ipv6/conf/all/forwarding":               boolSysctl(n.Forward),
			"net/ipv6/conf/all/accept_dad":               "0",
			"net/ipv6/conf/default/accept_dad":           "0",
			"net/ipv6/conf/all/disable_ipv6":             "0",
			"net/ipv6/conf/default/disable_ipv6":         "0",
			"net/ipv6/conf/default/accept_ra":            "0",
			"net/ipv6/conf/default/router_solicitations": "0",
		})
	})
	if err != nil {
		return fmt.Errorf("lab %s: node %s: sysctls: %w", name, n.Name, err)
	}
	h := b.nl[ns]
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("lab %s: node %s: lo up: %w", name, n.Name, err)
	}
	swh := b.nl[switchNS(name)]
	for _, l := range n.Links {
		if err := b.link(swh, h, ns, n, l); err != nil {
			return err
		}
		if err := b.step(ctx); err != nil {
			return err
		}
	}
	for _, r := range n.Routes {
		gw := net.IP(r.Via.AsSlice())
		dst := prefixNet(r.To)
		if err := h.RouteAdd(&netlink.Route{Dst: dst, Gw: gw}); err != nil {
			return fmt.Errorf("lab %s: node %s: route to %s via %s: %w", name, n.Name, r.To, r.Via, err)
		}
	}
	return nil
}

func prefixNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}

// link creates one veth pair directly between the switch namespace and the
// node's namespace: it never exists in the host's namespace.
func (b *builder) link(swh, h *netlink.Handle, ns string, n *NodeSpec, l LinkSpec) error {
	name := b.t.Name
	fail := func(what string, err error) error {
		return fmt.Errorf("lab %s: node %s: link %s: %s: %w", name, n.Name, l.Name, what, err)
	}
	br, err := swh.LinkByName(l.Switch)
	if err != nil {
		return fail("switch "+l.Switch, err)
	}
	// When port and node disagree, the port's veth gets the larger MTU and
	// a classifier drops what is too big without a trace (port_linux.go).
	// It is also needed when other ports of the switch take in larger frames
	// than this one may deliver: the bridge checks single frames, but lets
	// GSO packets with larger segments through.
	limit := min(l.PortMTU, l.MTU)
	filtered := l.PortMTU != l.MTU || limit < b.largestFrame(l.Switch)
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{
			Name: l.Port, MTU: max(l.PortMTU, l.MTU), MasterIndex: br.Attrs().Index,
			Flags: net.FlagUp, TxQLen: -1,
		},
		PeerName:      l.Name,
		PeerMTU:       uint32(l.MTU),
		PeerTxQLen:    -1,
		PeerNamespace: netlink.NsFd(b.ns[ns]),
	}
	if err := swh.LinkAdd(veth); err != nil {
		return fail("create veth (switch port "+l.Port+")", err)
	}
	if filtered {
		fromNode := 0
		if l.PortMTU < l.MTU {
			fromNode = l.PortMTU
		}
		port, err := swh.LinkByName(l.Port)
		if err == nil {
			err = portFilter(swh, port, fromNode, limit)
		}
		if err != nil {
			return fail("switch port "+l.Port+" MTU", err)
		}
	}
	link, err := h.LinkByName(l.Name)
	if err != nil {
		return fail("find", err)
	}
	for _, a := range l.Addresses {
		addr := &netlink.Addr{IPNet: prefixNet(a), Flags: unix.IFA_F_NODAD}
		if err := h.AddrAdd(link, addr); err != nil {
			return fail("address "+a.String(), err)
		}
	}
	if l.RateBitsPerSec > 0 {
		if err := h.QdiscAdd(tbf(link.Attrs().Index, l.RateBitsPerSec, l.MTU)); err != nil {
			return fail("rate", err)
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return fail("up", err)
	}
	return nil
}

// largestFrame returns the largest MTU of a frame that can enter switch sw
// from any of its ports.
func (b *builder) largestFrame(sw string) int {
	largest := 0
	for _, n := range b.t.Nodes {
		for _, l := range n.Links {
			if l.Switch == sw {
				largest = max(largest, min(l.MTU, l.PortMTU))
			}
		}
	}
	return largest
}

// tbf returns the token-bucket qdisc that shapes a link to rate: a bucket
// of 4 ms at rate (at least two full frames, so a frame always fits) and a
// queue of 50 ms at rate (at least 64 KiB, one GSO super-packet).
func tbf(index int, rateBitsPerSec int64, mtu int) *netlink.Tbf {
	bytesPerSec := uint64(rateBitsPerSec / 8)
	burst := max(bytesPerSec/250, uint64(2*(mtu+14)), 16<<10)
	limit := max(bytesPerSec/20, 64<<10)
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       bytesPerSec,
		Limit:      uint32(min(limit, 1<<30)),
		Buffer:     netlink.Xmittime(bytesPerSec, uint32(burst)),
	}
}

// prepareNetnsDir makes /run/netns a shared mount point, as ip-netns(8)
// does, so that unmounting a namespace here also unmounts it in mount
// namespaces created later (a node's processes), and the namespace dies.
func prepareNetnsDir() error {
	if err := os.MkdirAll(NetnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", NetnsDir, err)
	}
	made := false
	for {
		err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		if err != unix.EINVAL || made {
			return fmt.Errorf("make %s a shared mount: %w", NetnsDir, err)
		}
		if err := unix.Mount(NetnsDir, NetnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s: %w", NetnsDir, err)
		}
		made = true
	}
}

// createNS creates a named network namespace without moving any thread of
// this process into it for good: a fresh locked thread unshares, the
// namespace is bind-mounted to /run/netns/NAME, and the thread is discarded
// (a goroutine that exits while locked takes its thread with it).
func createNS(name string) (netns.NsHandle, error) {
	path := nsPath(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return -1, err
	}
	f.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		if err := unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("bind-mount %s: %w", path, err)
			return
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		os.Remove(path)
		return -1, err
	}
	return netns.GetFromPath(path)
}

// removeNS unmounts and removes a named namespace. The namespace itself, with
// every veth and bridge in it, goes when its last user is gone.
func removeNS(name string) error {
	path := nsPath(name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// inNS runs fn on a locked OS thread inside the namespace h and switches
// the thread back afterwards.
func inNS(h netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(h); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace: %w", err)
	}
	defer func() {
		// If the thread cannot go back it stays locked, and the runtime
		// discards it when the goroutine ends rather than reuse it.
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return fn()
}

// writeSysctls writes /proc/sys entries; net.* entries belong to the
// network namespace of the writing thread.
func writeSysctls(kv map[string]string) error {
	for k, v := range kv {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			return fmt.Errorf("sysctl %s=%s: %w", strings.ReplaceAll(k, "/", "."), v, err)
		}
	}
	return nil
}

// Open returns the lab called name, which must be up.
func Open(name string) (*Lab, error) {
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("lab: name %w", err)
	}
	st, err := readState(name)
	if err != nil {
		return nil, err
	}
	if !st.Complete || st.Topology == nil {
		return nil, fmt.Errorf("lab %s: %w", name, ErrIncomplete)
	}
	for _, ns := range st.Namespaces {
		if !nsExists(ns) {
			return nil, fmt.Errorf("lab %s: namespace %s is gone; run 'interlink lab up' again or 'interlink lab down %s'", name, ns, name)
		}
	}
	return newLab(st.Topology), nil
}

// Down removes everything the lab called name created: the processes
// running in its namespaces, the namespaces (and with them every veth and
// bridge) and its state. It works on a lab whose Up was killed halfway.
func Down(name string) error {
	if err := CheckPrivilege(); err != nil {
		return err
	}
	if err := validName(name); err != nil {
		return fmt.Errorf("lab: name %w", err)
	}
	unlock, err := lock(name)
	if err != nil {
		return err
	}
	err = down(name)
	unlock(err == nil || errors.Is(err, ErrNotFound))
	return err
}

// down is Down with the lock held. Besides the recorded namespaces it
// removes any namespace named for this lab (il-NAME, il-NAME.*), which only
// this lab can have created; it returns ErrNotFound only when there was
// nothing at all.
func down(name string) error {
	st, err := readState(name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	var names []string
	if st != nil {
		names = append(names, st.Namespaces...)
	}
	if entries, rerr := os.ReadDir(NetnsDir); rerr == nil {
		for _, e := range entries {
			if isLabNS(name, e.Name()) && !contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	if st == nil && len(names) == 0 {
		return err
	}
	if err := killProcesses(names); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		if err := removeNS(names[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %s: %w", name, errors.Join(errs...))
	}
	if err := os.Remove(statePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lab %s: remove state: %w", name, err)
	}
	return nil
}

// killProcesses ends the processes whose network namespace is one of the
// named ones (as `ip netns pids` finds them): SIGTERM, then SIGKILL after a
// grace period. This process itself is never signalled.
func killProcesses(names []string) error {
	type key struct{ dev, ino uint64 }
	want := map[key]bool{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(nsPath(n), &st); err == nil {
			want[key{st.Dev, st.Ino}] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			var st unix.Stat_t
			if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) == nil && want[key{st.Dev, st.Ino}] {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	pids := find()
	if len(pids) == 0 {
		return nil
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGTERM)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if pids = find(); len(pids) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGKILL)
	}
	return nil
}

// Do runs fn on a locked OS thread inside the node's network namespace and
// switches the thread back afterwards. Sockets fn creates belong to the node
// and stay there when used later from any goroutine. Goroutines fn starts do
// NOT run in the node: they may run on any thread. fn may call t.Fatal.
func (n *Node) Do(fn func() error) error {
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
	h, err := netns.GetFromPath(nsPath(n.ns))
	if err != nil {
		return fmt.Errorf("lab %s: node %s: open namespace: %w", n.lab.Name(), n.spec.Name, err)
	}
	errc := make(chan error, 1)
	go func() {
		defer h.Close()
		// Never unlocked: the thread's namespaces change for good, so it
		// must end with this goroutine.
		runtime.LockOSThread()
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
	}()
	return <-errc
}

// enterNode moves the calling (locked) thread into the node's network
// namespace and into a private mount namespace with the node's sysfs.
func enterNode(h netns.NsHandle) error {
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("enter namespace: %w", err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	// Slave, not private: unmounts on the host (a lab going down) still
	// reach this mount namespace, while nothing here reaches the host.
	if err := unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("unmount /sys: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount sysfs: %w", err)
	}
	return nil
}

// waitExit blocks until process pid exits, without reaping it (the caller's
// cmd.Wait does that).
func waitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
		if err != syscall.EINTR {
			return
		}
	}
}
