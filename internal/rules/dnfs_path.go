package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// leg is one storage path of a server entry as this node would send it:
// the path, its local address (when one pairs with it) and the interface
// the traffic leaves by (nil when it cannot be told: a name rather than an
// address, or no route).
type leg struct {
	path  inventory.DNFSValue
	local *inventory.DNFSValue
	iface *inventory.Interface
	how   string // why that interface: "route 10.20.1.0/24 dev eth3"
}

// storageLegs works out the interface of every path of s. With dontroute
// dNFS sends from its local address's interface without routing; otherwise
// the main routing table decides by destination, whatever the local.
func storageLegs(inv *inventory.Inventory, s *inventory.DNFSServer) []leg {
	var out []leg
	for i, p := range s.Paths {
		l := leg{path: p}
		if i < len(s.Locals) {
			l.local = &s.Locals[i]
		}
		dst, ok := parseIP(p.Value)
		switch {
		case s.Dontroute && l.local != nil:
			if a, ok := parseIP(l.local.Value); ok {
				l.iface = ifaceWithAddr(inv, a)
				if l.iface != nil {
					l.how = fmt.Sprintf("dontroute: local %s is on %s", a, l.iface.Name)
				}
			}
		case ok:
			if r := routeTo(inv, dst); r != nil {
				l.iface = inv.Interface(r.Interface)
				l.how = fmt.Sprintf("route %s dev %s", r.Destination, r.Interface)
			}
		}
		out = append(out, l)
	}
	return out
}

// parseIP parses an address as oranfstab writes it (no brackets, no port).
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return a.Unmap(), err == nil
}

// ifaceWithAddr returns the interface that holds address a, or nil.
func ifaceWithAddr(inv *inventory.Inventory, a netip.Addr) *inventory.Interface {
	for i := range inv.Interfaces {
		for _, c := range inv.Interfaces[i].Addresses {
			if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Unmap() == a {
				return &inv.Interfaces[i]
			}
		}
	}
	return nil
}

// routeTo is the IPv4 main-table route the kernel would pick for dst: the
// longest prefix, then the lowest metric. IPv6 destinations are not judged
// (the inventory reads only the IPv4 table).
func routeTo(inv *inventory.Inventory, dst netip.Addr) *inventory.Route {
	var best *inventory.Route
	for i := range inv.Routes {
		r := &inv.Routes[i]
		if !r.Destination.IsValid() || !r.Destination.Contains(dst) {
			continue
		}
		if best == nil || r.Destination.Bits() > best.Destination.Bits() ||
			r.Destination.Bits() == best.Destination.Bits() && r.Metric < best.Metric {
			best = r
		}
	}
	return best
}

func allAddrs(inv *inventory.Inventory) string {
	var parts []string
	for _, ifc := range inv.Interfaces {
		if len(ifc.Addresses) > 0 && ifc.Type != "loopback" {
			parts = append(parts, ifc.Name+" "+strings.Join(ifc.Addresses, " "))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// nfsMountAt is the mounted NFS mount at dir, or nil.
func nfsMountAt(inv *inventory.Inventory, dir string) *inventory.Mount {
	dir = strings.TrimRight(dir, "/")
	for i := range inv.Mounts {
		m := &inv.Mounts[i]
		if strings.TrimRight(m.MountPoint, "/") == dir && m.Mounted {
			return m
		}
	}
	return nil
}

func nfsMountList(inv *inventory.Inventory) string {
	var parts []string
	for _, m := range inv.Mounts {
		if m.Mounted {
			parts = append(parts, m.MountPoint)
		}
	}
	if len(parts) == 0 {
		return "none mounted"
	}
	return strings.Join(parts, ", ")
}

// runningMountsRead reports whether a running mount table was read, so
// that a mount missing from it is known to be not mounted.
func runningMountsRead(inv *inventory.Inventory) bool {
	for _, s := range inv.Sections {
		if s.Name == "mounts" {
			return s.Status == "ok" || s.Status == "partial" && !strings.Contains(s.Detail, "no running mount table")
		}
	}
	return false
}
