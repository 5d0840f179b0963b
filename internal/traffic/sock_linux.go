package traffic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/tcpinfo"
)

// sysTimeout bounds every blocking socket call (SO_RCVTIMEO, SO_SNDTIMEO),
// so a hot loop notices cancellation and its own deadlines in time.
const sysTimeout = 20 * time.Millisecond

// blockingIO puts a socket made by package net into blocking mode with
// bounded send and receive timeouts. Hot loops then enter the kernel once
// per call and are woken by the kernel directly, as in C tools, instead of
// going through the netpoller (a failed try, an epoll wake-up and a
// goroutine hand-off per message, which dominates a ping-pong round trip).
// After a timeout package net falls back to its poller, which honours the
// deadlines set on the conn; so deadlines and cancellation still work.
func blockingIO(c syscall.Conn) error {
	tv := unix.NsecToTimeval(sysTimeout.Nanoseconds())
	return control(c, func(fd int) error {
		if err := unix.SetNonblock(fd, false); err != nil {
			return err
		}
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return err
		}
		return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	})
}

func control(c syscall.Conn, fn func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// setBuffers sizes the socket buffers, beyond net.core.[rw]mem_max when
// privileged (SO_*BUFFORCE), as an interconnect host is tuned (docs/sources.md).
// Zero leaves a buffer alone.
func setBuffers(c syscall.Conn, snd, rcv int) error {
	return control(c, func(fd int) error {
		for _, b := range []struct{ size, force, plain int }{
			{snd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF}, {rcv, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF}} {
			if b.size == 0 {
				continue
			}
			if unix.SetsockoptInt(fd, unix.SOL_SOCKET, b.force, b.size) != nil {
				if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, b.plain, b.size); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// pathMTU is the MTU the kernel uses toward a connected socket's peer.
func pathMTU(c syscall.Conn) int {
	mtu := 0
	control(c, func(fd int) error {
		v, err := unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU)
		if err == nil {
			mtu = v
		}
		return err
	})
	return mtu
}

// connectUDP connects a UDP socket to a peer, so the kernel delivers only the
// peer's datagrams to it and sends need no address.
func connectUDP(c *net.UDPConn, peer netip.AddrPort) error {
	return control(c, func(fd int) error {
		if peer.Addr().Is4() || peer.Addr().Is4In6() {
			return unix.Connect(fd, &unix.SockaddrInet4{Port: int(peer.Port()), Addr: peer.Addr().Unmap().As4()})
		}
		return unix.Connect(fd, &unix.SockaddrInet6{Port: int(peer.Port()), Addr: peer.Addr().As16()})
	})
}

func enableRxTimestamps(c syscall.Conn) error {
	return control(c, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
}

// oobLen holds one SCM_TIMESTAMPNS control message.
var oobLen = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

// rxStamp finds the kernel receive time (SO_TIMESTAMPNS) in a message's
// control data.
func rxStamp(oob []byte) (int64, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return ts.Nano(), true
		}
		next := unix.CmsgSpace(l - unix.CmsgLen(0))
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

type tcpInfo struct {
	retrans     int64
	rtt, rttvar int64 // ns
	// minRTT is nil where the kernel does not give it (before 4.6).
	minRTT    *int64
	mss, pmtu int
	cwndBytes int64
	// rcvMSS is the largest segment payload received (the kernel's
	// estimate from arriving segments); timestamps says whether segments
	// carry the 12-byte timestamp option.
	rcvMSS     int
	timestamps bool
}

func readTCPInfo(c syscall.Conn) (tcpInfo, error) {
	var ti tcpInfo
	err := control(c, func(fd int) error {
		var err error
		ti, err = tcpInfoFD(fd)
		return err
	})
	return ti, err
}

func tcpInfoFD(fd int) (tcpInfo, error) {
	i, err := tcpinfo.Get(fd)
	if err != nil {
		return tcpInfo{}, err
	}
	ti := tcpInfo{retrans: int64(i.TotalRetrans()), rtt: i.RTT().Nanoseconds(), rttvar: i.RTTVar().Nanoseconds(),
		mss: i.SndMSS(), pmtu: i.PMTU(), cwndBytes: int64(i.SndCwnd()) * int64(i.SndMSS()),
		rcvMSS: i.RcvMSS(), timestamps: i.Timestamps()}
	if m, ok := i.MinRTT(); ok {
		ns := m.Nanoseconds()
		ti.minRTT = &ns
	}
	return ti, nil
}

// isTimeout reports a deadline or socket timeout (not an error: the loop
// checks its clock and goes on).
func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)
}

// cancelOnDone sets a past deadline on conns when ctx ends, waking any call
// blocked in the poller; blocking syscalls return within sysTimeout. The
// returned stop function releases the watcher.
func cancelOnDone(ctx context.Context, conns ...interface{ SetDeadline(time.Time) error }) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			for _, c := range conns {
				c.SetDeadline(time.Unix(1, 0))
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

// nanosleep sleeps on the calling (locked) thread; unlike time.Sleep it
// needs no hand-off between threads to resume, so pacing stays precise.
func nanosleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// EnableRxStampsFD asks the kernel for a software receive stamp
// (SO_TIMESTAMPNS) on every datagram of socket fd; for gc's sockets.
func EnableRxStampsFD(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// RxStampOOBLen is the control data room one receive stamp needs.
var RxStampOOBLen = oobLen

// RxStamp is the kernel's receive stamp in a message's control data, ns
// of CLOCK_REALTIME (as time.Now().UnixNano()); false when there is none.
func RxStamp(oob []byte) (int64, bool) { return rxStamp(oob) }
