//go:build linux

package pmtu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProbeOptions makes a socket send with DF set while ignoring the
// kernel's cached path MTU (only the interface MTU limits what may be
// sent), and queue ICMP errors on the socket's error queue.
func setProbeOptions(fd int, v6 bool) error {
	if v6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE); err != nil {
			return fmt.Errorf("IPV6_MTU_DISCOVER: %w", err)
		}
		// Never fragment locally: a size above the interface MTU is
		// EMSGSIZE, not two fragments.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, 1); err != nil {
			return fmt.Errorf("IPV6_DONTFRAG: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1); err != nil {
			return fmt.Errorf("IPV6_RECVERR: %w", err)
		}
		return nil
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE); err != nil {
		return fmt.Errorf("IP_MTU_DISCOVER: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVERR, 1); err != nil {
		return fmt.Errorf("IP_RECVERR: %w", err)
	}
	return nil
}

// ListenUDP opens a UDP socket on laddr set up for probing (DF, probe
// mode, error queue). Port 0 picks a free port.
func ListenUDP(laddr netip.AddrPort) (*net.UDPConn, error) {
	v6 := laddr.Addr().Is6() && !laddr.Addr().Is4In6()
	network := "udp4"
	if v6 {
		network = "udp6"
	}
	var serr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if err := c.Control(func(fd uintptr) { serr = setProbeOptions(int(fd), v6) }); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, laddr.String())
	if err != nil {
		return nil, fmt.Errorf("udp probe socket on %s: %w", laddr, err)
	}
	return pc.(*net.UDPConn), nil
}

// readBuffer holds any datagram: the largest IPv4 UDP payload is 65507
// bytes, an IPv6 one without jumbograms 65527.
const readBuffer = 65536

// readLoop reads rc into a buffer of size bytes until it fails (closed),
// calling onData for each datagram, onShort for each datagram read short
// (larger than the buffer: MSG_TRUNC; never taken for what was sent) and
// onQueue for each error-queue entry. Go's poller wakes readers on
// EPOLLERR, so one loop serves both queues.
func readLoop(rc syscall.RawConn, size int, onData func(b []byte, from unix.Sockaddr), onShort func(), onQueue func(b, oob []byte)) error {
	buf := make([]byte, size)
	oob := make([]byte, 512)
	for {
		var (
			n, oobn int
			flags   int
			from    unix.Sockaddr
			queued  bool
			rerr    error
		)
		err := rc.Read(func(fd uintptr) bool {
			var err error
			n, oobn, _, _, err = unix.Recvmsg(int(fd), buf, oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
			if err == nil {
				queued = true
				return true
			}
			n, _, flags, from, err = unix.Recvmsg(int(fd), buf, nil, unix.MSG_DONTWAIT)
			if err == unix.EAGAIN {
				return false
			}
			rerr = err
			return true
		})
		if err != nil {
			return err
		}
		switch {
		case queued:
			onQueue(buf[:n], oob[:oobn])
		case rerr != nil:
			// A pending socket error (EMSGSIZE, ECONNREFUSED, ...) reported
			// once by a plain read; its details are on the error queue.
			if errors.Is(rerr, unix.EBADF) {
				return rerr
			}
		case flags&unix.MSG_TRUNC != 0:
			if onShort != nil {
				onShort()
			}
		default:
			onData(buf[:n], from)
		}
	}
}

// queueEvent decodes an error-queue entry into an Event (ok false for
// entries that say nothing about the path, such as local EMSGSIZE).
func queueEvent(oob []byte) (Event, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return Event{}, false
	}
	for _, m := range msgs {
		if !(m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) &&
			!(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
			continue
		}
		if len(m.Data) < 16 {
			continue
		}
		ee := unix.SockExtendedErr{
			Errno:  binary.NativeEndian.Uint32(m.Data[0:4]),
			Origin: m.Data[4], Type: m.Data[5], Code: m.Data[6],
			Info: binary.NativeEndian.Uint32(m.Data[8:12]),
		}
		from := offender(m.Data[16:])
		switch ee.Origin {
		case unix.SO_EE_ORIGIN_ICMP:
			switch {
			case ee.Type == 3 && ee.Code == 4:
				return Event{Kind: EvTooBig, MTU: int(ee.Info), From: from}, true
			case ee.Type == 3:
				return Event{Kind: EvUnreach, From: from, Info: icmpUnreach(ee.Code)}, true
			case ee.Type == 11:
				return Event{Kind: EvUnreach, From: from, Info: "time exceeded (TTL)"}, true
			}
		case unix.SO_EE_ORIGIN_ICMP6:
			switch ee.Type {
			case 2:
				return Event{Kind: EvTooBig, MTU: int(ee.Info), From: from}, true
			case 1:
				return Event{Kind: EvUnreach, From: from, Info: fmt.Sprintf("ICMPv6 destination unreachable (code %d)", ee.Code)}, true
			case 3:
				return Event{Kind: EvUnreach, From: from, Info: "ICMPv6 time exceeded (hop limit)"}, true
			}
		}
	}
	return Event{}, false
}

func icmpUnreach(code uint8) string {
	switch code {
	case 0:
		return "network unreachable"
	case 1:
		return "host unreachable"
	case 3:
		return "port unreachable (no interlink agent session there?)"
	case 9, 10, 13:
		return "communication administratively prohibited (a firewall)"
	}
	return fmt.Sprintf("destination unreachable (code %d)", code)
}

// offender decodes the sockaddr that follows sock_extended_err.
func offender(b []byte) netip.Addr {
	if len(b) < 2 {
		return netip.Addr{}
	}
	switch binary.NativeEndian.Uint16(b[0:2]) {
	case unix.AF_INET:
		if len(b) >= 8 {
			return netip.AddrFrom4([4]byte(b[4:8]))
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			return netip.AddrFrom16([16]byte(b[8:24]))
		}
	}
	return netip.Addr{}
}

// sockaddrAddrPort converts a received sockaddr.
func sockaddrAddrPort(sa unix.Sockaddr) netip.AddrPort {
	switch v := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(v.Addr), uint16(v.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(v.Addr).Unmap(), uint16(v.Port))
	}
	return netip.AddrPort{}
}

func isMsgSize(err error) bool { return errors.Is(err, unix.EMSGSIZE) }

// sendTries bounds the attempts of sendProbe.
const sendTries = 3

// sendProbe calls send, which sends one probe, and tells a local limit from
// a stale error. A socket with IP_RECVERR/IPV6_RECVERR not only queues each
// ICMP error it receives ("fragmentation needed", "packet too big") but also
// keeps it as the pending socket error (sk_err), and the next send on the
// socket returns that error instead of sending (sock_alloc_send_pskb checks
// sock_error first) unless a read consumed it before. So after a hop
// reports its MTU, the next probe of any size, even one that fits, can fail
// with EMSGSIZE without leaving. A probe that really exceeds the local
// limit fails every time; a stale error fails once and is cleared by that
// failure, so EMSGSIZE is believed only when every attempt returns it.
func sendProbe(send func() error) error {
	var err error
	for range sendTries {
		if err = send(); !isMsgSize(err) {
			return err
		}
	}
	return err
}
