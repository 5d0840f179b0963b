package lab

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Why lab nodes know their switch neighbours statically: the kernel's
// neighbour tables (ARP and IPv6 ND) are one table per protocol for the whole
// machine, shared by every network namespace, and their garbage-collection
// limits (net.ipv4.neigh.default.gc_thresh3 and its IPv6 twin, 1024 by
// default, settable only on the host) count the entries of all namespaces
// together. A lab of 100 nodes on one switch in a full mesh needs 9,900
// entries: past 1,024 the kernel refuses new ones ("neighbor table
// overflow!" in dmesg), and connections between healthy nodes fail with "no
// route to host" or time out, a limit of the lab that a real cluster of
// separate machines does not have. Permanent entries are not counted
// against those limits, so every node gets one for each address of every
// other link on the same switch; the frames still cross the switch and its
// ports' MTU filters exactly as before.

// neighbour is one link on a switch as the other links see it.
type neighbour struct {
	node  string
	mac   net.HardwareAddr
	addrs []netip.Prefix
}

// linkOnSwitch is a node's link and the switch it is on, kept while Up runs.
type linkOnSwitch struct {
	h      *netlink.Handle
	index  int
	node   string
	link   string
	prefix []netip.Prefix
}

// neighbours adds, in every node, a permanent neighbour entry for every
// address of every other link on the same switch that is on one of the
// link's own prefixes.
func (b *builder) neighbours() error {
	for sw, links := range b.onSwitch {
		var ns []neighbour
		for _, l := range links {
			link, err := l.h.LinkByIndex(l.index)
			if err != nil {
				return fmt.Errorf("lab %s: node %s: link %s: %w", b.t.Name, l.node, l.link, err)
			}
			ns = append(ns, neighbour{node: l.node, mac: link.Attrs().HardwareAddr, addrs: l.prefix})
		}
		for i, l := range links {
			for j, n := range ns {
				if i == j {
					continue
				}
				for _, a := range n.addrs {
					if !onLink(l.prefix, a.Addr()) {
						continue
					}
					if err := l.h.NeighSet(permanent(l.index, a.Addr(), n.mac)); err != nil {
						return fmt.Errorf("lab %s: switch %s: node %s: neighbour %s (%s of %s): %w",
							b.t.Name, sw, l.node, a.Addr(), n.mac, n.node, err)
					}
				}
			}
		}
	}
	return nil
}

func onLink(own []netip.Prefix, a netip.Addr) bool {
	for _, p := range own {
		if p.Masked().Contains(a) && p.Addr() != a {
			return true
		}
	}
	return false
}

func permanent(index int, a netip.Addr, mac net.HardwareAddr) *netlink.Neigh {
	family := unix.AF_INET
	if a.Is6() {
		family = unix.AF_INET6
	}
	return &netlink.Neigh{
		LinkIndex: index, Family: family, State: netlink.NUD_PERMANENT,
		IP: net.IP(a.AsSlice()), HardwareAddr: mac,
	}
}
