package traffic

import (
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// batchConn is what a hot loop needs of its socket: batched reads and
// writes, a read deadline, and a read that never waits (ReadNow: what has
// arrived, or EAGAIN). *pollConn (through the netpoller) and *rawConn
// (blocking system calls the runtime does not see) both have it.
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	ReadNow(ms []ipv4.Message) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
	SetReadDeadline(t time.Time) error
}

// pollConn is the netpoller's packet conn of a socket that got no raw
// slot. Its ReadNow enters recvmmsg directly with MSG_DONTWAIT: through the
// poller, a read that finds nothing waits for the next datagram instead.
type pollConn struct {
	*ipv4.PacketConn
	conn *net.UDPConn
	hdrs rawConn // message headers for ReadNow
}

func (c *pollConn) ReadNow(ms []ipv4.Message) (int, error) {
	var n int
	var err error
	if cerr := control(c.conn, func(fd int) error {
		c.hdrs.fd = fd
		n, err = c.hdrs.recv(ms, unix.MSG_DONTWAIT)
		return nil
	}); cerr != nil {
		return 0, cerr
	}
	return n, err
}

// rawConn reads and writes a blocking socket (blockingIO) with
// recvmmsg/sendmmsg (recvfrom/sendto for a single datagram without control
// data) entered through syscall.RawSyscall6 on the calling locked thread: the thread sleeps in the kernel and is woken by it, as a C
// tool's is, without the runtime's system-call bookkeeping, on a duplicate
// of the socket that is in no epoll set (acquireRaw).
//
// Why, measured (loopback, 8 KiB ping-pong, p50 round trip, 3 alternating
// rounds, with one goroutine waiting in the netpoller as in the agent and
// bench): raw on the duplicate 17.6 to 18.5 us; raw on the socket still in
// the runtime's epoll set 26 to 30 us; the netpoller 29 to 50 us; blocking
// syscall.Syscall on the duplicate 21.7 to 22.1 us; sockperf 18.3 and 19.3
// us (2 x its one-way figure; 37.6 in a noisy round). The largest cost was
// the epoll set: every arriving datagram (and every freed send buffer) also
// woke a runtime thread idling in epoll_wait, a second context switch per
// message on the other CPU. Through syscall.Syscall, sysmon may take the P
// of a thread blocked in the kernel and the thread must win one back.
//
// The thread holds its P while it sleeps, so a process runs at most
// GOMAXPROCS-1 raw loops at once (acquireRaw) and the rest of it always
// has a P. Every call returns within sysTimeout (SO_RCVTIMEO/SO_SNDTIMEO),
// or earlier at the read deadline; a signal (the runtime preempting the
// thread for a garbage collection) ends it with EINTR, since Linux never
// restarts a socket read that has a timeout set, and the loop's next call
// is a safe point (an idle raw loop delays a collection by 1 to 4 ms).
type rawConn struct {
	fd       int
	hdrs     []mmsghdr
	iovs     []unix.Iovec
	deadline time.Time
	timeout  time.Duration // the SO_RCVTIMEO currently set
}

// mmsghdr is struct mmsghdr of <sys/socket.h>.
// Go pads it to Msghdr's alignment as C does.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

var rawSlots = make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))

// acquireRaw takes conn over for a hot loop when a raw slot is free: it
// duplicates the socket, closes conn (which removes it from the runtime's
// epoll set: otherwise every arriving datagram would also wake a thread
// idling in the netpoller, a second context switch per message on the
// other CPU) and returns a rawConn on the duplicate, closed by the release
// function. Otherwise (GOMAXPROCS 1, or as many raw loops running as the
// process can afford) it returns conn's netpoller packet conn (*pollConn).
// Callers must not use conn after acquireRaw; they may close it again.
func acquireRaw(conn *net.UDPConn) (batchConn, func()) {
	fd, release, ok := takeRaw(conn)
	if !ok {
		return &pollConn{PacketConn: ipv4.NewPacketConn(conn), conn: conn}, release
	}
	return &rawConn{fd: fd, timeout: sysTimeout}, release
}

// takeRaw takes a raw slot and the socket of conn when a slot is free:
// it duplicates the socket (close-on-exec) and closes conn. The release
// function closes the duplicate and frees the slot; without a slot (ok
// false) it does nothing and conn is untouched.
func takeRaw(conn interface {
	syscall.Conn
	Close() error
}) (fd int, release func(), ok bool) {
	free, ok := TakeRawSlot()
	if !ok {
		return -1, func() {}, false
	}
	dup := -1
	if err := control(conn, func(fd int) error {
		var err error
		dup, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		return err
	}); err != nil {
		free()
		return -1, func() {}, false
	}
	conn.Close()
	return dup, func() {
		unix.Close(dup)
		free()
	}, true
}

// TakeRawSlot reserves one of the process's raw slots for a hot loop of
// another package that, like rawConn, sleeps in the kernel through
// syscall.RawSyscall and so keeps its P: the slots (GOMAXPROCS-1) are
// shared by every such loop of the process, so that the rest of it always
// has a P. release frees the slot. Without a free slot (ok false) the loop
// must block through syscall.Syscall, which lets the runtime use its P.
func TakeRawSlot() (release func(), ok bool) {
	select {
	case rawSlots <- struct{}{}:
		return func() { <-rawSlots }, true
	default:
		return func() {}, false
	}
}

// sleepers serialises TakeSleeperSlot's changes of GOMAXPROCS (each reads
// the value and sets it one higher or lower).
var sleepers sync.Mutex

// TakeSleeperSlot makes the calling loop raw, as TakeRawSlot does, for a
// loop that sleeps in the kernel nearly all the time (a ping thread, awake
// a few microseconds every few milliseconds): it holds a P while it sleeps
// without using a CPU, so the process gets one P more for as long as it
// runs, and the rest of it keeps every P it had. A loop that keeps a CPU
// busy must take a raw slot instead. release gives the P back.
func TakeSleeperSlot() (release func()) {
	sleepers.Lock()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	sleepers.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			sleepers.Lock()
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) - 1)
			sleepers.Unlock()
		})
	}
}

func (c *rawConn) SetReadDeadline(t time.Time) error {
	c.deadline = t
	return nil
}

// prepare points the message headers at ms's buffers.
func (c *rawConn) prepare(ms []ipv4.Message) {
	if len(c.hdrs) < len(ms) {
		c.hdrs = make([]mmsghdr, len(ms))
		c.iovs = make([]unix.Iovec, len(ms))
	}
	for i := range ms {
		b := ms[i].Buffers[0]
		c.iovs[i] = unix.Iovec{}
		if len(b) > 0 {
			c.iovs[i].Base = &b[0]
		}
		c.iovs[i].SetLen(len(b))
		c.hdrs[i] = mmsghdr{}
		h := &c.hdrs[i].hdr
		h.Iov = &c.iovs[i]
		h.SetIovlen(1)
		if oob := ms[i].OOB; len(oob) > 0 {
			h.Control = &oob[0]
			h.SetControllen(len(oob))
		}
	}
}

func (c *rawConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	if !c.deadline.IsZero() {
		left := time.Until(c.deadline)
		if left <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		// Wake at the deadline, not up to sysTimeout after it.
		want := min(sysTimeout, (left + time.Microsecond - 1).Truncate(time.Microsecond))
		if want != c.timeout && (want < sysTimeout || c.timeout < sysTimeout) {
			tv := unix.NsecToTimeval(want.Nanoseconds())
			if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				return 0, os.NewSyscallError("setsockopt", err)
			}
			c.timeout = want
		}
	}
	return c.recv(ms, flags)
}

// ReadNow reads what has arrived without waiting, whatever the deadline.
func (c *rawConn) ReadNow(ms []ipv4.Message) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	return c.recv(ms, unix.MSG_DONTWAIT)
}

// recv is one recvmmsg into ms; a single message with control data is one
// recvmsg, and without one recvfrom, the kernel's shortest path (no message header or vector
// to copy in and out), as C tools read. Either way Flags carries MSG_TRUNC
// for a datagram read short, as recvmmsg reports it: recvfrom has no
// message flags, so it always asks for the real length (MSG_TRUNC) and
// compares, and returns the real length in N only when the caller asked.
func (c *rawConn) recv(ms []ipv4.Message, flags int) (int, error) {
	if len(ms) == 1 && len(ms[0].OOB) == 0 {
		b := ms[0].Buffers[0]
		n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(flags&^unix.MSG_WAITFORONE|unix.MSG_TRUNC), 0, 0)
		if e != 0 {
			return 0, e
		}
		ms[0].N, ms[0].NN, ms[0].Flags = int(n), 0, 0
		if int(n) > len(b) {
			ms[0].Flags = unix.MSG_TRUNC
			if flags&unix.MSG_TRUNC == 0 {
				ms[0].N = len(b)
			}
		}
		return 1, nil
	}
	c.prepare(ms)
	if len(ms) == 1 {
		// One datagram with control data (a sampled read of the split):
		// recvmsg, 60 ns shorter than recvmmsg of one here.
		h := &c.hdrs[0]
		n, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&h.hdr)), uintptr(flags&^unix.MSG_WAITFORONE))
		if e != 0 {
			return 0, e
		}
		ms[0].N, ms[0].NN, ms[0].Flags = int(n), int(h.hdr.Controllen), int(h.hdr.Flags)
		return 1, nil
	}
	n, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&c.hdrs[0])), uintptr(len(ms)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e // EAGAIN (timeout) and EINTR are timeouts to isTimeout
	}
	for i := 0; i < int(n); i++ {
		h := &c.hdrs[i]
		ms[i].N, ms[i].NN, ms[i].Flags = int(h.len), int(h.hdr.Controllen), int(h.hdr.Flags)
	}
	return int(n), nil
}

func (c *rawConn) WriteBatch(ms []ipv4.Message, flags int) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	if len(ms) == 1 && len(ms[0].OOB) == 0 {
		// One datagram is one sendto, as for recv.
		b := ms[0].Buffers[0]
		_, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(flags), 0, 0)
		if e != 0 {
			return 0, e
		}
		return 1, nil
	}
	c.prepare(ms)
	n, _, e := syscall.RawSyscall6(unix.SYS_SENDMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&c.hdrs[0])), uintptr(len(ms)), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
