package kernel

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/tcpinfo"
)

// probeKernel runs the probes of Probe on this kernel.
func probeKernel() map[string]bool {
	out := map[string]bool{}
	set := func(id string, present, known bool) {
		if known {
			out[id] = present
		}
	}
	present, known := ThreadSelf("/proc")
	set("thread-self", present, known)
	acked, minRTT, known := probeTCPInfo()
	set("tcpinfo-bytes-acked", acked, known)
	set("tcpinfo-min-rtt", minRTT, known)
	set(probeUDPGSO())
	set(probePidfd())
	return out
}

// probeTCPInfo reads TCP_INFO of an unconnected TCP socket: the length the
// kernel returns is the size of its struct tcp_info, which says which
// fields it has.
func probeTCPInfo() (acked, minRTT, known bool) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, false, false
	}
	defer unix.Close(fd)
	info, err := tcpinfo.Get(fd)
	if err != nil {
		return false, false, false
	}
	return tcpInfoHas(info.Len())
}

// tcpInfoHas says, from the length TCP_INFO returned, whether the kernel
// filled tcpi_bytes_acked (4.1) and tcpi_min_rtt with tcpi_notsent_bytes
// (4.6), as tcpinfo decodes a structure of that length; known is false for
// a length too short to be any kernel's.
func tcpInfoHas(length int) (acked, minRTT, known bool) {
	info, err := tcpinfo.Parse(make([]byte, length))
	if err != nil {
		return false, false, false
	}
	_, acked = info.BytesAcked()
	_, minRTT = info.MinRTT()
	return acked, minRTT, true
}

// probeUDPGSO asks for UDP_SEGMENT (UDPGSO).
func probeUDPGSO() (string, bool, bool) {
	switch err := UDPGSO(); {
	case err == nil:
		return "udp-gso", true, true
	case errors.Is(err, unix.ENOPROTOOPT):
		return "udp-gso", false, true
	}
	return "udp-gso", false, false
}

// UDPGSO asks the kernel whether it has UDP GSO, with
// getsockopt(SOL_UDP, UDP_SEGMENT) on a fresh socket: a kernel before 4.18
// answers ENOPROTOOPT (wrapped in the error). It must not be judged by a
// send, because such a kernel does not refuse the control message: it
// ignores it and sends the whole buffer as one fragmented datagram.
func UDPGSO() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		// An IPv6-only host: the option is the same on either family.
		if fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("udp socket: %w", err)
		}
	}
	defer unix.Close(fd)
	if _, err := unix.GetsockoptInt(fd, unix.SOL_UDP, unix.UDP_SEGMENT); err != nil {
		return fmt.Errorf("getsockopt(SOL_UDP, UDP_SEGMENT): %w", err)
	}
	return nil
}

// probePidfd opens a pidfd of this process: ENOSYS before 5.3, EPERM where
// a seccomp filter refuses it; either way the lab waits without one.
func probePidfd() (string, bool, bool) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	switch err {
	case nil:
		unix.Close(fd)
		return "pidfd-open", true, true
	case unix.ENOSYS, unix.EPERM:
		return "pidfd-open", false, true
	}
	return "pidfd-open", false, false
}
