package tcpinfo

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// limit caps the length Get passes on (0: none); see LimitLength.
var limit atomic.Int64

// LimitLength makes Get return at most n bytes of TCP_INFO, as a kernel
// whose struct tcp_info is n bytes long does (BaseLen: Linux 3.10), until
// restore is called. It is the seam tests use to run the real code on an
// old kernel's answer; it affects the whole process.
func LimitLength(n int) (restore func()) {
	old := limit.Swap(int64(n))
	return func() { limit.Store(old) }
}

// Get reads TCP_INFO of the socket fd, with the length the kernel
// returned.
func Get(fd int) (Info, error) {
	var b [MaxLen]byte
	n := uint32(len(b))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return Info{}, fmt.Errorf("getsockopt TCP_INFO: %w", errno)
	}
	if n > uint32(len(b)) {
		return Info{}, fmt.Errorf("getsockopt TCP_INFO: the kernel reported %d bytes in a %d-byte buffer", n, len(b))
	}
	if l := limit.Load(); l > 0 && int64(n) > l {
		n = uint32(l)
	}
	return Parse(b[:n])
}
