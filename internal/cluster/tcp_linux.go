package cluster

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/tcpinfo"
)

// userTimeout returns a dialer Control function that sets TCP_USER_TIMEOUT:
// data the node leaves unacknowledged for d fails the connection in the
// kernel (ETIMEDOUT), whatever is or is not watching it (a mesh tunnel, a
// short command, the cleanup). Without it the kernel retransmits for
// about 15 minutes (tcp_retries2) before it gives up.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// readTCPState reads the sending side of l's connection from the kernel
// (TCP_INFO and SIOCOUTQ); false when it cannot (a closed connection).
func readTCPState(l *link) (tcpState, bool) {
	rc, err := l.tcp.SyscallConn()
	if err != nil {
		return tcpState{}, false
	}
	return tcpStateOf(rc, l.written.Load)
}

// tcpStateOf reads the state of rc's socket; written gives the bytes
// written to it (counted once the kernel took them), read before the
// queue so that a write under way can make the fallback's Acked too small
// for a moment, never too large.
func tcpStateOf(rc syscall.RawConn, written func() int64) (tcpState, bool) {
	w := written()
	var info tcpinfo.Info
	var queued int
	var ierr, qerr error
	if err := rc.Control(func(fd uintptr) {
		info, ierr = tcpinfo.Get(int(fd))
		queued, qerr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
	}); err != nil || ierr != nil || qerr != nil {
		return tcpState{}, false
	}
	st := tcpState{Unacked: info.Unacked(), Queued: int64(queued), Retransmits: info.TotalRetrans()}
	if acked, ok := info.BytesAcked(); ok {
		// The kernel counts the SYN's sequence number as one byte.
		st.Acked, st.AckedByKernel = max(acked-1, 0), true
	} else {
		st.Acked = max(w-st.Queued, 0)
	}
	return st, true
}
