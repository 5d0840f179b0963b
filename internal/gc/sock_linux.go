package gc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/traffic"
)

// sysTimeout bounds every blocking socket call, so the loop sees its
// deadlines and a stop in time.
const sysTimeout = 20 * time.Millisecond

// udpBuffer is the socket buffer size: Oracle's preinstall rmem_max, what a
// tuned interconnect host allows (as bench's UDP ends).
const udpBuffer = 4 << 20

// sock is a node's one UDP socket for a run: blocking, not in the runtime's
// epoll set (made with socket(2), not package net), read and written in
// batches with recvmmsg/sendmmsg on the loop's locked thread, each message
// with its peer's address. With a raw slot (traffic.TakeRawSlot) the calls
// go through syscall.RawSyscall6 as bench's hot loops do; without, through
// syscall.Syscall6, which lets the runtime use the thread's P meanwhile.
type sock struct {
	fd       int
	raw      bool
	release  func()
	hdrs     []mmsghdr
	iovs     []unix.Iovec
	deadline time.Time
	timeout  time.Duration
	// oobs hold each message's receive stamp, stamps what the last read
	// found (0: none); nil unless enableStamps was called.
	oobs   [][]byte
	stamps []int64
}

// enableStamps asks the kernel for a receive stamp on every datagram of
// s, read into stamps; a kernel that refuses leaves s without (the parts
// that need stamps are then absent).
func (s *sock) enableStamps() {
	if traffic.EnableRxStampsFD(s.fd) == nil {
		s.oobs = [][]byte{}
	}
}

// stamp is the receive stamp of the last read's message i, ns (0: none).
func (s *sock) stamp(i int) int64 {
	if i >= len(s.stamps) {
		return 0
	}
	return s.stamps[i]
}

// mmsghdr is struct mmsghdr of <sys/socket.h>.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

// openSock opens a socket bound to local (port 0: any free port).
func openSock(local netip.Addr) (*sock, netip.AddrPort, error) {
	local = local.Unmap()
	fam := unix.AF_INET6
	if local.Is4() {
		fam = unix.AF_INET
	}
	fd, err := unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, netip.AddrPort{}, fmt.Errorf("gc: socket: %w", err)
	}
	s := &sock{fd: fd, timeout: sysTimeout, release: func() {}}
	fail := func(what string, err error) (*sock, netip.AddrPort, error) {
		unix.Close(fd)
		return nil, netip.AddrPort{}, fmt.Errorf("gc: %s on %s: %w", what, local, err)
	}
	tv := unix.NsecToTimeval(sysTimeout.Nanoseconds())
	for _, o := range []struct{ force, plain int }{{unix.SO_SNDBUFFORCE, unix.SO_SNDBUF}, {unix.SO_RCVBUFFORCE, unix.SO_RCVBUF}} {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, o.force, udpBuffer) != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o.plain, udpBuffer); err != nil {
				return fail("socket buffers", err)
			}
		}
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("receive timeout", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fail("send timeout", err)
	}
	if err := unix.Bind(fd, sockaddr(netip.AddrPortFrom(local, 0))); err != nil {
		return fail("bind", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	var port int
	switch v := sa.(type) {
	case *unix.SockaddrInet4:
		port = v.Port
	case *unix.SockaddrInet6:
		port = v.Port
	}
	return s, netip.AddrPortFrom(local, uint16(port)), nil
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if a := ap.Addr().Unmap(); a.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// rawName is ap as the kernel's sockaddr_in or sockaddr_in6, for sendmmsg.
func rawName(ap netip.AddrPort) unix.RawSockaddrInet6 {
	var r unix.RawSockaddrInet6
	a := ap.Addr().Unmap()
	b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(&r))
	if a.Is4() {
		r4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(&r))
		r4.Family = unix.AF_INET
		r4.Addr = a.As4()
	} else {
		r.Family = unix.AF_INET6
		r.Addr = a.As16()
	}
	binary.BigEndian.PutUint16(b[2:4], ap.Port()) // sin_port and sin6_port, network order
	return r
}

// nameOf decodes the source address recvmmsg wrote.
func nameOf(r *unix.RawSockaddrInet6) netip.AddrPort {
	b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(r))
	port := binary.BigEndian.Uint16(b[2:4])
	switch r.Family {
	case unix.AF_INET:
		r4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(r))
		return netip.AddrPortFrom(netip.AddrFrom4(r4.Addr), port)
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(r.Addr).Unmap(), port)
	}
	return netip.AddrPort{}
}

// takeSlot makes the socket's calls raw when a raw slot is free; call it on
// the loop's locked thread before the first read.
func (s *sock) takeSlot() {
	s.release, s.raw = traffic.TakeRawSlot()
}

// takeSleeperSlot makes the socket's calls raw with a P of their own (see
// traffic.TakeSleeperSlot): for the ping engine, which sleeps between pings.
func (s *sock) takeSleeperSlot() {
	s.release, s.raw = traffic.TakeSleeperSlot(), true
}

func (s *sock) close() {
	unix.Close(s.fd)
	s.release()
}

func (s *sock) prepare(bufs [][]byte, names []unix.RawSockaddrInet6, n int) {
	if len(s.hdrs) < n {
		s.hdrs = make([]mmsghdr, n)
		s.iovs = make([]unix.Iovec, n)
	}
	for i := 0; i < n; i++ {
		b := bufs[i]
		s.iovs[i] = unix.Iovec{Base: &b[0]}
		s.iovs[i].SetLen(len(b))
		s.hdrs[i] = mmsghdr{}
		h := &s.hdrs[i].hdr
		h.Iov = &s.iovs[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		if names[i].Family == unix.AF_INET {
			h.Namelen = unix.SizeofSockaddrInet4
		}
	}
}

func (s *sock) call(trap uintptr, n int, flags int) (int, error) {
	var r uintptr
	var e syscall.Errno
	if s.raw {
		r, _, e = syscall.RawSyscall6(trap, uintptr(s.fd), uintptr(unsafe.Pointer(&s.hdrs[0])), uintptr(n), uintptr(flags), 0, 0)
	} else {
		r, _, e = syscall.Syscall6(trap, uintptr(s.fd), uintptr(unsafe.Pointer(&s.hdrs[0])), uintptr(n), uintptr(flags), 0, 0)
	}
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// read receives up to len(bufs) datagrams, waiting for the first until the
// deadline (at most sysTimeout): lens and names get each one's length and
// source. A timeout returns 0 and no error.
func (s *sock) read(bufs [][]byte, lens []int, names []unix.RawSockaddrInet6) (int, error) {
	left := time.Until(s.deadline)
	if left <= 0 {
		return 0, nil
	}
	want := min(sysTimeout, (left + time.Microsecond - 1).Truncate(time.Microsecond))
	if want != s.timeout {
		tv := unix.NsecToTimeval(want.Nanoseconds())
		if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return 0, os.NewSyscallError("setsockopt", err)
		}
		s.timeout = want
	}
	for i := range bufs {
		names[i].Family = unix.AF_INET6 // room for either: Namelen of the larger
	}
	s.prepare(bufs, names, len(bufs))
	if s.oobs != nil {
		for len(s.oobs) < len(bufs) {
			s.oobs = append(s.oobs, make([]byte, traffic.RxStampOOBLen))
			s.stamps = append(s.stamps, 0)
		}
		for i := range bufs {
			s.hdrs[i].hdr.Control = &s.oobs[i][0]
			s.hdrs[i].hdr.SetControllen(len(s.oobs[i]))
		}
	}
	n, err := s.call(unix.SYS_RECVMMSG, len(bufs), unix.MSG_WAITFORONE)
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return 0, nil
		}
		return 0, err
	}
	for i := 0; i < n; i++ {
		lens[i] = int(s.hdrs[i].len)
		if s.hdrs[i].hdr.Flags&unix.MSG_TRUNC != 0 {
			lens[i] = -1 // larger than any datagram of the run
		}
		if s.oobs != nil {
			at, ok := traffic.RxStamp(s.oobs[i][:s.hdrs[i].hdr.Controllen])
			if !ok || at <= 0 {
				at = 0
			}
			s.stamps[i] = at
		}
	}
	return n, nil
}

// writeFor bounds how long write retries a full send queue: what is not
// out by then is dropped, as a congested network would drop it.
const writeFor = time.Second

// write sends every datagram, retrying the rest after a partial send and
// send timeouts (a full queue) until stop says so or writeFor passed.
func (s *sock) write(bufs [][]byte, names []unix.RawSockaddrInet6, stop func() bool) error {
	giveUp := time.Now().Add(writeFor)
	for sent := 0; sent < len(bufs); {
		s.prepare(bufs[sent:], names[sent:], len(bufs)-sent)
		n, err := s.call(unix.SYS_SENDMMSG, len(bufs)-sent, 0)
		sent += n
		switch {
		case err == nil:
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOBUFS):
			if stop() || time.Now().After(giveUp) {
				return nil
			}
		case errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.ENETUNREACH):
			// An ICMP error from an earlier datagram: the datagram at the
			// head was not sent; skip it, as the network would lose it.
			sent++
		default:
			return fmt.Errorf("gc: send: %w", err)
		}
	}
	return nil
}

// mtuOf returns the MTU of the interface that holds a, or 0 when none is
// found. A loopback interface holds its whole prefix (the kernel's local
// route for 127.0.0.0/8 on lo), so an agent on 127.0.0.2 has lo's MTU
// although lo lists only 127.0.0.1/8.
func mtuOf(a netip.Addr) int {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0
	}
	a = a.Unmap()
	prefixMTU := 0
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		for _, ad := range addrs {
			p, ok := ad.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(p.IP)
			if !ok {
				continue
			}
			if ip.Unmap() == a {
				return i.MTU
			}
			if ones, _ := p.Mask.Size(); i.Flags&net.FlagLoopback != 0 && netip.PrefixFrom(ip.Unmap(), ones).Contains(a) {
				prefixMTU = i.MTU
			}
		}
	}
	return prefixMTU
}
