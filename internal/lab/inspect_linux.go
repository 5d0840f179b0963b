package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/ebpf"
	"github.com/interlink/interlink/internal/lab/topology"
	"github.com/interlink/interlink/internal/shellq"
)

// Inspect reads the lab called name from the kernel and compares it with
// its topology. A lab that is damaged or incomplete is still inspected as
// far as it exists; the differences are listed in Problems.
func Inspect(name string) (*Status, error) {
	if err := CheckPrivilege(); err != nil {
		return nil, err
	}
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("lab: name %w", err)
	}
	st, err := readState(name)
	if errors.Is(err, ErrNotFound) {
		if left := leftovers(name); len(left) > 0 {
			// lab up was killed before its first record was renamed:
			// nothing was built, but files remain for lab down.
			return &Status{Name: name, State: StateIncomplete, Problems: []string{
				"no record, only " + strings.Join(left, " and ") + " (a lab up killed before it recorded anything); remove them with: " + shellq.Join("interlink", "lab", "down", name)}}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	t := st.Topology
	if t == nil {
		return nil, fmt.Errorf("lab %s: state has no topology", name)
	}
	s := &Status{Name: name, File: t.File, State: StateUp, Namespace: switchNS(name), Created: st.Created}
	problem := func(format string, a ...any) { s.Problems = append(s.Problems, fmt.Sprintf(format, a...)) }
	open := func(ns string) (*netlink.Handle, func()) {
		if !slices.Contains(st.Namespaces, ns) {
			return nil, func() {}
		}
		nh, err := netns.GetFromPath(nsPath(ns))
		if err != nil {
			problem("namespace %s is missing", ns)
			return nil, func() {}
		}
		h, err := netlink.NewHandleAt(nh, unix.NETLINK_ROUTE)
		if err != nil {
			nh.Close()
			problem("namespace %s: netlink: %v", ns, err)
			return nil, func() {}
		}
		return h, func() { h.Close(); nh.Close() }
	}
	swh, closeSw := open(switchNS(name))
	defer closeSw()
	for _, sw := range t.Switches {
		ss := SwitchStatus{Name: sw.Name, Namespace: switchNS(name)}
		if swh != nil {
			if br, err := swh.LinkByName(sw.Name); err == nil {
				ss.MTU = br.Attrs().MTU
				if ss.MTU != sw.MTU {
					problem("switch %s has MTU %d, topology says %d", sw.Name, ss.MTU, sw.MTU)
				}
			} else {
				problem("switch %s is missing", sw.Name)
			}
		}
		s.Switches = append(s.Switches, ss)
	}
	in := &inspection{st: st, swh: swh, open: open, problem: problem}
	for i := range t.Nodes {
		s.Nodes = append(s.Nodes, kindOf(&t.Nodes[i]).inspect(in, t.Nodes[i]))
	}
	inspectServices(st, s, problem)
	switch {
	case !st.Complete && building(name):
		s.State = StateBuilding
	case !st.Complete:
		s.State = StateIncomplete
	case len(s.Problems) > 0:
		s.State = StateDamaged
	}
	return s, nil
}

func inspectNode(h, swh *netlink.Handle, n NodeSpec, ns string, problem func(string, ...any)) NodeStatus {
	out := NodeStatus{Name: n.Name, Namespace: ns, Forward: n.Forward, Links: []LinkStatus{}, Routes: []RouteSpec{}}
	for _, l := range n.Links {
		ls := LinkStatus{Name: l.Name, Switch: l.Switch, Port: l.Port, State: "missing", Addresses: []netip.Prefix{}}
		if h != nil {
			if link, err := h.LinkByName(l.Name); err == nil {
				a := link.Attrs()
				ls.State, ls.MTU, ls.MAC = a.OperState.String(), a.MTU, a.HardwareAddr.String()
				if ls.MTU != l.MTU {
					problem("node %s link %s has MTU %d, topology says %d", n.Name, l.Name, ls.MTU, l.MTU)
				}
				addrs, _ := h.AddrList(link, netlink.FAMILY_ALL)
				for _, ad := range addrs {
					if ad.Scope != unix.RT_SCOPE_UNIVERSE {
						continue
					}
					if ip, ok := netip.AddrFromSlice(ad.IP); ok {
						ones, _ := ad.Mask.Size()
						ls.Addresses = append(ls.Addresses, netip.PrefixFrom(ip.Unmap(), ones))
					}
				}
				if qs, err := h.QdiscList(link); err == nil {
					for _, q := range qs {
						if tb, ok := q.(*netlink.Tbf); ok && q.Attrs().Parent == netlink.HANDLE_ROOT {
							ls.RateBitsPerSec = int64(tb.Rate) * 8
						}
					}
				}
				// tbf keeps bytes per second: compare at that resolution.
				if ls.RateBitsPerSec != l.RateBitsPerSec/8*8 {
					problem("node %s link %s is shaped to %d bit/s, topology says %d", n.Name, l.Name, ls.RateBitsPerSec, l.RateBitsPerSec)
				}
			} else {
				problem("node %s link %s is missing", n.Name, l.Name)
			}
		}
		if swh != nil {
			if port, err := swh.LinkByName(l.Port); err == nil {
				// A port whose veth is wider than its port_mtu enforces it
				// with its classifier (port_linux.go).
				ls.PortMTU = min(port.Attrs().MTU, l.PortMTU)
				inspectPort(swh, port, l, &ls, problem)
				if ls.PortFilter == nil && port.Attrs().MTU != l.PortMTU {
					problem("switch port %s has MTU %d and no port filter, topology says %d", l.Port, port.Attrs().MTU, l.PortMTU)
				}
			} else {
				problem("switch port %s (node %s link %s) is missing", l.Port, n.Name, l.Name)
			}
		}
		out.Links = append(out.Links, ls)
	}
	if h != nil {
		routes, _ := h.RouteList(nil, netlink.FAMILY_ALL)
		for _, r := range routes {
			if r.Gw == nil {
				continue
			}
			via, _ := netip.AddrFromSlice(r.Gw)
			var to netip.Prefix
			if r.Dst == nil {
				to = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
				if !via.Unmap().Is4() {
					to = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
				}
			} else if ip, ok := netip.AddrFromSlice(r.Dst.IP); ok {
				ones, _ := r.Dst.Mask.Size()
				to = netip.PrefixFrom(ip.Unmap(), ones)
			}
			out.Routes = append(out.Routes, RouteSpec{To: to, Via: via.Unmap()})
		}
	}
	return out
}

// inspectPort reads the classifiers of link l's switch port into ls
// (LossPercent, and PortFilter, which stays nil when the port has none)
// and says where their loss differs from l's.
func inspectPort(h *netlink.Handle, port netlink.Link, l LinkSpec, ls *LinkStatus, problem func(string, ...any)) {
	for _, d := range []struct {
		dir  ebpf.Direction
		what string
	}{{ebpf.FromNode, "from the node"}, {ebpf.ToNode, "to the node"}} {
		in, err := ebpf.Read(h, port, d.dir)
		if err != nil {
			problem("switch port %s: classifier %s: %v", l.Port, d.what, err)
			continue
		}
		loss := 0.0
		if in != nil {
			if ls.PortFilter == nil {
				ls.PortFilter = &PortFilter{}
			}
			if d.dir == ebpf.FromNode {
				ls.PortFilter.FromNode = &in.Counters
			} else {
				ls.PortFilter.ToNode = &in.Counters
			}
			loss = in.Port.LossPercent
		}
		ls.LossPercent = max(ls.LossPercent, loss)
		if loss != l.LossPercent {
			problem("switch port %s drops %s of the frames %s at random, topology says %s", l.Port,
				topology.FormatLoss(loss), d.what, topology.FormatLoss(l.LossPercent))
		}
	}
}

// building reports whether an Up (or a Down) of the lab holds its lock
// right now. It only looks (/proc/locks): taking the lock, even shared and
// for a moment, would make a concurrent Up see the lab as busy.
func building(name string) bool {
	pid, _ := lockHolder(lockPath(name))
	return pid != 0
}
