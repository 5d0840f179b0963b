package traffic

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tcpEnd is one stream of a TCP end: the conn, or, when a raw slot was
// free (acquireRaw), a duplicate of its socket outside the runtime's epoll
// set that the hot thread reads or writes with RawSyscall, as the UDP and
// blocks loops do (raw_linux.go). info reads TCP_INFO from whichever
// holds the socket.
type tcpEnd struct {
	conn    *net.TCPConn
	fd      int // the duplicate, or -1
	release func()
}

// openTCPEnd takes a raw slot for c if one is free: it duplicates the
// socket and closes c (the caller may close it again). The release
// function closes the duplicate and frees the slot.
func openTCPEnd(c *net.TCPConn) tcpEnd {
	fd, release, _ := takeRaw(c)
	return tcpEnd{conn: c, fd: fd, release: release}
}

func (e tcpEnd) info() (tcpInfo, error) {
	if e.fd < 0 {
		return readTCPInfo(e.conn)
	}
	return tcpInfoFD(e.fd)
}

func rawRW(trap uintptr, fd int, b []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// write is tcpWrite on the duplicate: the same loop, the same half-close
// and bounded drain.
func (e tcpEnd) write(ctx context.Context, size int, end time.Time, n *atomic.Int64, opt Options) error {
	if e.fd < 0 {
		return tcpWrite(ctx, e.conn, size, end, n, opt)
	}
	buf := make([]byte, size)
	for ctx.Err() == nil && time.Now().Before(end) {
		if err := opt.wait(ctx, size); err != nil {
			break
		}
		w, err := rawRW(unix.SYS_WRITE, e.fd, buf)
		n.Add(int64(w))
		if err != nil && !isTimeout(err) {
			return err
		}
	}
	unix.Shutdown(e.fd, unix.SHUT_WR)
	if ctx.Err() != nil {
		return nil
	}
	var b [512]byte
	for drain := time.Now().Add(drainGrace); time.Now().Before(drain) && ctx.Err() == nil; {
		r, err := rawRW(unix.SYS_READ, e.fd, b[:])
		if err == nil && r == 0 {
			return nil // the receiver closed: it has read everything
		}
		if err != nil && !isTimeout(err) {
			return err
		}
	}
	return nil
}

// read is tcpRead on the duplicate, until the sender's end of stream, ctx
// or end.
func (e tcpEnd) read(ctx context.Context, end time.Time, n, started *atomic.Int64) error {
	if e.fd < 0 {
		return tcpRead(e.conn, n, started)
	}
	buf := make([]byte, 256<<10)
	for ctx.Err() == nil && time.Now().Before(end) {
		r, err := rawRW(unix.SYS_READ, e.fd, buf)
		if err != nil {
			if isTimeout(err) {
				continue
			}
			return err
		}
		if r == 0 {
			unix.Shutdown(e.fd, unix.SHUT_WR)
			return nil
		}
		if started.Load() == 0 {
			started.CompareAndSwap(0, time.Now().UnixNano())
		}
		n.Add(int64(r))
	}
	return nil
}
