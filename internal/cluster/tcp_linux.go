package cluster

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// readTCPState reads the sending side of c from the kernel (TCP_INFO);
// false when it cannot (a closed connection).
func readTCPState(c *net.TCPConn) (tcpState, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return tcpState{}, false
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || ierr != nil {
		return tcpState{}, false
	}
	return tcpState{
		Acked:       int64(info.Bytes_acked),
		Unacked:     int(info.Unacked),
		NotSent:     int64(info.Notsent_bytes),
		Retransmits: int(info.Total_retrans),
	}, true
}
