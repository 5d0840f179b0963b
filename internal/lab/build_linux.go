package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/sysctl"
)

// Up builds the lab t describes, after t.Validate. A lab of the same name
// (complete, or left over by a crash) is removed first. While Up runs, the
// name is taken: another Up or Down of it returns a *BusyError (ErrBusy)
// at once, having changed nothing. On failure Up removes everything it made
// and returns the error; no state is left behind. opts are for tests.
func Up(ctx context.Context, t *Topology, opts ...UpOption) (*Lab, error) {
	if err := CheckPrivilege(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	err := checkPackages(t)
	if err != nil {
		return nil, err
	}
	if err := checkPortClassifier(t); err != nil {
		return nil, err
	}
	var cfg upConfig
	for _, o := range opts {
		o(&cfg)
	}
	for _, k := range kinds {
		if err := k.plan(ctx, t, nodesOf(t, k), &cfg); err != nil {
			return nil, err
		}
	}
	unlock, err := lock(t.Name, opUp)
	if err != nil {
		return nil, err
	}
	built := false
	defer func() { unlock(!built) }() // a failed Up leaves no lab, so no lock file
	if err := down(t.Name, newDownConfig(nil)); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("lab %s: remove the previous lab: %w", t.Name, err)
	}
	b := &builder{
		t:   t,
		cfg: cfg,
		st:  &state{Name: t.Name, Topology: t, PID: os.Getpid(), Created: time.Now().UTC()},
		ns:  map[string]netns.NsHandle{}, nl: map[string]*netlink.Handle{},
		at: map[string]int{}, onSwitch: map[string][]linkOnSwitch{},
	}
	err = b.build(ctx)
	b.close()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("lab %s: interrupted, removing what was built: %w", t.Name, ctx.Err())
	}
	if err != nil {
		if derr := down(t.Name, newDownConfig(nil)); derr != nil && !errors.Is(derr, ErrNotFound) {
			err = fmt.Errorf("%w (and cleanup failed: %v; run: %s)", err, derr, shellq.Join("interlink", "lab", "down", t.Name))
		}
		return nil, err
	}
	built = true
	if cfg.status != nil {
		*cfg.status, _ = Inspect(t.Name)
	}
	return newLab(t), nil
}

// builder holds the open namespaces and netlink handles while Up runs.
type builder struct {
	t   *Topology
	cfg upConfig
	st  *state
	ns  map[string]netns.NsHandle
	nl  map[string]*netlink.Handle
	at  map[string]int // how often each hook point was reached
	// onSwitch lists, by switch, the node links on it (neigh_linux.go).
	onSwitch map[string][]linkOnSwitch
}

func (b *builder) close() {
	for _, h := range b.nl {
		h.Close()
	}
	for _, h := range b.ns {
		h.Close()
	}
}

// reached runs the test hook, if any, at point at; it ends Up early when
// the context is done.
func (b *builder) reached(ctx context.Context, at string) error {
	b.at[at]++
	if b.cfg.hook != nil {
		if err := b.cfg.hook(ctx, at, b.at[at]); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// writeState records the lab (see state.write), with the hook between the
// temporary file and its rename.
func (b *builder) writeState(ctx context.Context) error {
	return b.st.write(func() error { return b.reached(ctx, PointState) })
}

func (b *builder) build(ctx context.Context) error {
	name := b.t.Name
	if err := prepareNetnsDir(); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	if err := b.writeState(ctx); err != nil {
		return err
	}
	all := []string{switchNS(name)}
	for i := range b.t.Nodes {
		if ns := namespaceOf(name, &b.t.Nodes[i]); ns != "" {
			all = append(all, ns)
		}
	}
	for _, ns := range all {
		// Record before creating, so a kill between the two still leaves a
		// record that covers the namespace.
		b.st.Namespaces = append(b.st.Namespaces, ns)
		if err := b.writeState(ctx); err != nil {
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
		if err := b.reached(ctx, PointNamespace); err != nil {
			return err
		}
	}
	if err := b.switches(); err != nil {
		return err
	}
	for _, k := range kinds {
		if err := k.build(ctx, b, nodesOf(b.t, k)); err != nil {
			return err
		}
	}
	if err := b.services(ctx); err != nil {
		return err
	}
	b.st.Complete = true
	return b.writeState(ctx)
}

// switches creates the bridges in the lab's switch namespace.
func (b *builder) switches() error {
	ns := switchNS(b.t.Name)
	// The switch namespace only bridges frames: no IPv6 link-local
	// addresses, router solicitations or DAD on its ports.
	err := inNS(b.ns[ns], func() error {
		err := sysctl.Write(map[string]string{
			"net/ipv6/conf/all/disable_ipv6":     "1",
			"net/ipv6/conf/default/disable_ipv6": "1",
		})
		if err != nil {
			return err
		}
		// A switch switches: with br_netfilter, bridged frames would pass
		// through netfilter (and its defragmentation) unless told not to.
		if _, serr := os.Stat("/proc/sys/net/bridge"); serr == nil {
			err = sysctl.Write(map[string]string{
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
		return sysctl.Write(map[string]string{
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
		if err := b.reached(ctx, PointLink); err != nil {
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
	if portFiltered(b.t, l) {
		port, err := swh.LinkByName(l.Port)
		if err == nil {
			err = filterPort(b.t, swh, port, l)
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
		if err := shape(h, link, l.RateBitsPerSec, l.MTU); err != nil {
			return fail("rate", err)
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return fail("up", err)
	}
	b.onSwitch[l.Switch] = append(b.onSwitch[l.Switch], linkOnSwitch{
		h: h, index: link.Attrs().Index, node: n.Name, link: l.Name, prefix: l.Addresses,
	})
	return nil
}
