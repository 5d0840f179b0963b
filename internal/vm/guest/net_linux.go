package guest

import (
	"fmt"
	"net"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/sysctl"
)

// configure gives the guest's links their names, MTUs and addresses (each
// found by its MAC address, as the kernel named them eth0, eth1, ... in
// probe order), then the routes and forwarding.
func configure(cfg *Config) error {
	sysctls := map[string]string{
		// Addresses work at once, as in namespace nodes.
		"net/ipv6/conf/all/accept_dad":     "0",
		"net/ipv6/conf/default/accept_dad": "0",
	}
	if cfg.Forward {
		sysctls["net/ipv4/ip_forward"] = "1"
		sysctls["net/ipv6/conf/all/forwarding"] = "1"
	}
	if err := sysctl.Write(sysctls); err != nil {
		return err
	}
	if lo, err := netlink.LinkByName("lo"); err == nil {
		netlink.LinkSetUp(lo)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	for _, want := range cfg.Links {
		var l netlink.Link
		for _, c := range links {
			if strings.EqualFold(c.Attrs().HardwareAddr.String(), want.MAC) {
				l = c
			}
		}
		if l == nil {
			return fmt.Errorf("link %s: no interface with MAC %s (is virtio_net loaded?)", want.Name, want.MAC)
		}
		if err := configureLink(l, want); err != nil {
			return fmt.Errorf("link %s: %w", want.Name, err)
		}
	}
	for _, r := range cfg.Routes {
		dst := &net.IPNet{IP: r.To.Addr().AsSlice(), Mask: net.CIDRMask(r.To.Bits(), r.To.Addr().BitLen())}
		if err := netlink.RouteAdd(&netlink.Route{Dst: dst, Gw: r.Via.AsSlice()}); err != nil {
			return fmt.Errorf("route %s via %s: %w", r.To, r.Via, err)
		}
	}
	return nil
}

func configureLink(l netlink.Link, want Link) error {
	if err := netlink.LinkSetDown(l); err != nil {
		return err
	}
	if l.Attrs().Name != want.Name {
		if err := netlink.LinkSetName(l, want.Name); err != nil {
			return fmt.Errorf("rename %s: %w", l.Attrs().Name, err)
		}
	}
	// The NIC came before "default" was set, so it has its own entry. Best
	// effort: a kernel without IPv6 has no such entry, and needs none.
	sysctl.Write(map[string]string{"net/ipv6/conf/" + want.Name + "/accept_dad": "0"})
	if err := netlink.LinkSetMTU(l, want.MTU); err != nil {
		return fmt.Errorf("mtu %d: %w", want.MTU, err)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return err
	}
	for _, a := range want.Addresses {
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.Addr().AsSlice(), Mask: net.CIDRMask(a.Bits(), a.Addr().BitLen())}}
		if a.Addr().Is6() {
			addr.Flags = unix.IFA_F_NODAD
		}
		if err := netlink.AddrAdd(l, addr); err != nil {
			return fmt.Errorf("address %s: %w", a, err)
		}
	}
	return nil
}
