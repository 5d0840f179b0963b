package lab

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Set changes a running lab in place (MTUs, port MTUs, rates), as a
// maintenance window would change a real interconnect, and records the
// new topology, which `lab status` then checks against the kernel. Every
// port and link of a switch that a setting touches is configured anew:
// MTU of both veth ends, the port's size classifier, the link's shaping.
func Set(name string, settings []Setting) (*Topology, error) {
	if err := CheckPrivilege(); err != nil {
		return nil, err
	}
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("lab: name %w", err)
	}
	if _, err := readState(name); err != nil {
		return nil, err // no such lab: take no lock (it would leave a file)
	}
	unlock, err := lock(name, opSet)
	if err != nil {
		return nil, err
	}
	defer unlock(false)
	st, err := readState(name)
	if err != nil {
		return nil, err
	}
	if !st.Complete || st.Topology == nil {
		return nil, fmt.Errorf("lab %s: %w", name, ErrIncomplete)
	}
	nt, err := Apply(st.Topology, settings)
	if err != nil {
		return nil, err
	}
	if err := checkPortClassifier(nt); err != nil {
		return nil, err
	}
	touched := map[string]bool{}
	for _, s := range settings {
		touched[switchOf(nt, s.Target)] = true
	}
	if err := vmOnSwitches(nt, touched); err != nil {
		return nil, err
	}
	handles := &nsHandles{lab: name, h: map[string]*netlink.Handle{}}
	defer handles.close()
	if err := reconfigureSwitches(name, nt, touched, handles); err != nil {
		return nil, err
	}
	st.Topology = nt
	if err := st.write(nil); err != nil {
		return nil, err
	}
	return nt, nil
}

// nsHandles keeps one netlink handle per namespace of a lab, opened on
// first use, for as long as lab set works on it.
type nsHandles struct {
	lab string
	h   map[string]*netlink.Handle
}

func (c *nsHandles) open(ns string) (*netlink.Handle, error) {
	if h := c.h[ns]; h != nil {
		return h, nil
	}
	nh, err := netns.GetFromPath(nsPath(ns))
	if err != nil {
		return nil, fmt.Errorf("lab %s: namespace %s: %w", c.lab, ns, err)
	}
	defer nh.Close()
	h, err := netlink.NewHandleAt(nh, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("lab %s: namespace %s: %w", c.lab, ns, err)
	}
	c.h[ns] = h
	return h, nil
}

func (c *nsHandles) close() {
	for _, h := range c.h {
		h.Close()
	}
}

// reconfigureSwitches configures anew every link on a touched switch
// (both veth ends' MTU, the port classifier, the shaping) and then the
// switch's own MTU.
func reconfigureSwitches(name string, nt *Topology, touched map[string]bool, handles *nsHandles) error {
	swh, err := handles.open(switchNS(name))
	if err != nil {
		return err
	}
	b := &builder{t: nt}
	for _, sw := range nt.Switches {
		if !touched[sw.Name] {
			continue
		}
		br, err := swh.LinkByName(sw.Name)
		if err != nil {
			return fmt.Errorf("lab %s: switch %s: %w", name, sw.Name, err)
		}
		for _, n := range nt.Nodes {
			for _, l := range n.Links {
				if l.Switch != sw.Name {
					continue
				}
				h, err := handles.open(nodeNS(name, n.Name))
				if err != nil {
					return err
				}
				if err := b.reconfigure(swh, h, l); err != nil {
					return fmt.Errorf("lab %s: node %s: link %s: %w", name, n.Name, l.Name, err)
				}
			}
		}
		if err := swh.LinkSetMTU(br, sw.MTU); err != nil {
			return fmt.Errorf("lab %s: switch %s: set MTU %d: %w", name, sw.Name, sw.MTU, err)
		}
	}
	return nil
}

// switchOf returns the switch a target names or sits on.
func switchOf(t *Topology, target string) string {
	for _, n := range t.Nodes {
		for _, l := range n.Links {
			if n.Name+":"+l.Name == target {
				return l.Switch
			}
		}
	}
	return target
}

// reconfigure sets one link as the builder would have made it with the
// topology's current values.
func (b *builder) reconfigure(swh, h *netlink.Handle, l LinkSpec) error {
	port, err := swh.LinkByName(l.Port)
	if err != nil {
		return fmt.Errorf("switch port %s: %w", l.Port, err)
	}
	link, err := h.LinkByName(l.Name)
	if err != nil {
		return err
	}
	if err := swh.LinkSetMTU(port, max(l.PortMTU, l.MTU)); err != nil {
		return fmt.Errorf("switch port %s: MTU: %w", l.Port, err)
	}
	if err := h.LinkSetMTU(link, l.MTU); err != nil {
		return fmt.Errorf("MTU %d: %w", l.MTU, err)
	}
	// The port's classifier: removed, then added again where the builder
	// would add one (port_linux.go).
	if err := delQdisc(swh, &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: port.Attrs().Index,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}); err != nil {
		return fmt.Errorf("switch port %s: remove classifier: %w", l.Port, err)
	}
	if err := filterPort(b.t, swh, port, l); err != nil {
		return fmt.Errorf("switch port %s MTU: %w", l.Port, err)
	}
	if err := delQdisc(h, &netlink.Tbf{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index,
		Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}}); err != nil {
		return fmt.Errorf("remove rate: %w", err)
	}
	if l.RateBitsPerSec > 0 {
		if err := shape(h, link, l.RateBitsPerSec, l.MTU); err != nil {
			return fmt.Errorf("rate: %w", err)
		}
	}
	return nil
}

// delQdisc removes q if it is there.
func delQdisc(h *netlink.Handle, q netlink.Qdisc) error {
	qs, err := h.QdiscList(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Index: q.Attrs().LinkIndex}})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(qs, func(x netlink.Qdisc) bool {
		return x.Attrs().Handle == q.Attrs().Handle && x.Type() == q.Type()
	}) {
		return nil
	}
	if err := h.QdiscDel(q); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}
