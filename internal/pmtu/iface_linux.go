package pmtu

import (
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Iface returns the interface that holds addr and its MTU (an address
// inside a loopback interface's prefix counts, as 127.0.0.2 on lo does).
// It must run in the network namespace of the socket (on a lab node's
// locked thread).
//
// It reads the addresses once (one netlink dump) and asks the kernel for
// the one interface's name, flags and MTU by ioctl: every probe endpoint
// calls it, and net.Interfaces with each interface's Addrs is a dump of
// the links and one of the addresses per interface (a twentieth of an
// agent's CPU in a 100-node mesh, more on a host with many interfaces).
func Iface(addr netip.Addr) (string, int, error) {
	addr = addr.Unmap().WithZone("")
	b, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return "", 0, fmt.Errorf("interface addresses: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return "", 0, fmt.Errorf("interface addresses: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", 0, fmt.Errorf("interfaces: %w", err)
	}
	defer unix.Close(fd)
	within := -1
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWADDR || len(m.Data) < syscall.SizeofIfAddrmsg {
			continue
		}
		ifa := (*syscall.IfAddrmsg)(unsafe.Pointer(&m.Data[0]))
		local, ok := ifaLocal(m)
		if !ok {
			continue
		}
		if local == addr {
			return ifaceByIndex(fd, int(ifa.Index))
		}
		if within < 0 && netip.PrefixFrom(local, int(ifa.Prefixlen)).Contains(addr) && loopback(fd, int(ifa.Index)) {
			within = int(ifa.Index)
		}
	}
	if within >= 0 {
		return ifaceByIndex(fd, within)
	}
	return "", 0, fmt.Errorf("no interface holds %s", addr)
}

// ifaLocal is the local address of an RTM_NEWADDR message: IFA_LOCAL when
// present (on a point-to-point link IFA_ADDRESS is the peer's), else
// IFA_ADDRESS.
func ifaLocal(m syscall.NetlinkMessage) (netip.Addr, bool) {
	attrs, err := syscall.ParseNetlinkRouteAttr(&m)
	if err != nil {
		return netip.Addr{}, false
	}
	var out netip.Addr
	for _, a := range attrs {
		switch a.Attr.Type {
		case syscall.IFA_LOCAL:
			if ip, ok := netip.AddrFromSlice(a.Value); ok {
				return ip.Unmap(), true
			}
		case syscall.IFA_ADDRESS:
			if ip, ok := netip.AddrFromSlice(a.Value); ok {
				out = ip.Unmap()
			}
		}
	}
	return out, out.IsValid()
}

// ifaceByIndex returns the name and MTU of interface index.
func ifaceByIndex(fd, index int) (string, int, error) {
	ifr, err := unix.NewIfreq("")
	if err != nil {
		return "", 0, err
	}
	ifr.SetUint32(uint32(index))
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFNAME, ifr); err != nil {
		return "", 0, fmt.Errorf("interface %d: name: %w", index, err)
	}
	name := ifr.Name()
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFMTU, ifr); err != nil {
		return "", 0, fmt.Errorf("interface %s: MTU: %w", name, err)
	}
	return name, int(int32(ifr.Uint32())), nil
}

// loopback reports whether interface index is a loopback interface.
func loopback(fd, index int) bool {
	ifr, err := unix.NewIfreq("")
	if err != nil {
		return false
	}
	ifr.SetUint32(uint32(index))
	if unix.IoctlIfreq(fd, unix.SIOCGIFNAME, ifr) != nil || unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr) != nil {
		return false
	}
	return ifr.Uint16()&unix.IFF_LOOPBACK != 0
}
