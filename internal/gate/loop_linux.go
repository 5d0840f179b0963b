//go:build linux

package gate

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux an event loop, one thread per route, accepts the route's
// clients and proxies those admitted at once (nobody queued, a token and a
// handshake slot free: the common case) with nonblocking sockets, epoll and
// splice(2), as HAProxy does. The net package's way (a goroutine pair per
// connection, a timer for the dial and one for the handshake, the runtime
// poller and thread wake-ups between every step) cost 30 to 45 % more CPU
// per connection than HAProxy on loopback, and added a quarter more time
// to each connection. A connection that has to wait is handed to the
// queue as a *net.TCPConn and, once admitted, proxied by goroutines as
// before: it has waited anyway. An upstream given by name keeps the net
// package's path (acceptLoop), so that it is resolved for every connection
// as before.

// Tags in the epoll data of the listener and the wake-up eventfd; a
// connection's sockets carry a generation instead (>= 0), so that an event
// already read for a socket that has been closed since is not taken for a
// new socket reusing its descriptor.
const (
	tagListener = -1
	tagWake     = -2
)

type loop struct {
	r       *route
	ep      int
	lfd     int // the listening socket; -1 once closed
	wakeFd  int // an eventfd: others ask the loop to look at the route
	armed   bool
	paused  bool      // the queue is full: not accepting
	retry   time.Time // accept failed (out of descriptors): try again then
	up      unix.Sockaddr
	upAddr  net.Addr
	family  int
	ends    []*end // by descriptor
	gen     int32
	pairs   int
	timers  timers
	pipes   []*pipe // idle
	stopped chan struct{}
}

// runLoop serves the route's listener with an event loop if it can, and
// returns when the loop stops accepting (the route closed); false if the
// route is to accept with acceptLoop instead.
func (r *route) runLoop() bool {
	if r.goroutines {
		return false
	}
	ap, err := netip.ParseAddrPort(r.cfg.Upstream)
	if err != nil || ap.Addr().Zone() != "" {
		return false // a name (or a zone) is for the resolver
	}
	l, err := newLoop(r, ap)
	if err != nil {
		r.log.Warn("no event loop: accepting with goroutines", "route", r.cfg.Name, "err", err)
		return false
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		l.release()
		return false
	}
	r.wakeLoop = l.wake
	r.mu.Unlock()
	r.ln.Close() // the loop's duplicate keeps the socket listening
	r.proxied.Add(1)
	go func() {
		defer r.proxied.Done()
		l.run()
	}()
	<-l.stopped
	return true
}

func newLoop(r *route, up netip.AddrPort) (*loop, error) {
	l := &loop{r: r, ep: -1, lfd: -1, wakeFd: -1, upAddr: net.TCPAddrFromAddrPort(up), stopped: make(chan struct{})}
	if a := up.Addr().Unmap(); a.Is4() {
		l.up, l.family = &unix.SockaddrInet4{Port: int(up.Port()), Addr: a.As4()}, unix.AF_INET
	} else {
		l.up, l.family = &unix.SockaddrInet6{Port: int(up.Port()), Addr: a.As16()}, unix.AF_INET6
	}
	err := l.open()
	if err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// open makes the epoll set and the eventfd and takes over the route's
// listening socket (a duplicate descriptor, outside the runtime's poller).
func (l *loop) open() (err error) {
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll_create: %w", err)
	}
	if l.wakeFd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	if err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.wakeFd, &unix.EpollEvent{Events: unix.EPOLLIN, Pad: tagWake}); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	rc, err := l.r.ln.SyscallConn()
	if err != nil {
		return err
	}
	var derr error
	if err = rc.Control(func(fd uintptr) { l.lfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err == nil {
		err = derr
	}
	if err != nil {
		l.lfd = -1
		return fmt.Errorf("listener: %w", err)
	}
	return l.arm()
}

// listenConfig makes the routes' listening sockets with the options of a
// connection set before listen(2): Linux copies a listener's socket and
// TCP options into each connection it accepts, so the loop sets none on
// an accepted socket (five system calls a connection fewer). Before
// listen, because the kernel completes connections from then on, before
// any accept.
var listenConfig = net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) { setSockopts(int(fd), sockopts[:]...) })
}}

// release closes what the loop holds.
func (l *loop) release() {
	for _, fd := range []int{l.lfd, l.wakeFd, l.ep} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	for _, p := range l.pipes {
		p.close()
	}
	l.lfd, l.wakeFd, l.ep, l.pipes = -1, -1, -1, nil
}

// wake asks the loop to look at the route again; r.mu is held, so that
// the loop cannot close the eventfd meanwhile.
func (l *loop) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(l.wakeFd, one[:])
}

// yieldEvery is how often a busy loop goes through the scheduler. The
// runtime's monitor takes the processor away from a goroutine that has not
// been through the scheduler for 10 ms (forcePreemptNS), even one sleeping
// in epoll_wait, and then polls every 20 us: a thread hand-off and a
// stream of wake-ups on a machine the gate shares with the database. A
// yield costs a wake-up of an idle thread itself, so not more often.
const yieldEvery = 5 * time.Millisecond

func (l *loop) run() {
	events := make([]unix.EpollEvent, 128)
	yielded := time.Now()
	for {
		n, err := unix.EpollWait(l.ep, events, l.timeout())
		if err != nil && err != unix.EINTR {
			l.fail(err)
			return
		}
		for _, ev := range events[:max(n, 0)] {
			switch ev.Pad {
			case tagListener:
				l.accept()
			case tagWake:
				l.woken()
			default:
				if int(ev.Fd) < len(l.ends) {
					if e := l.ends[ev.Fd]; e != nil && e.gen == ev.Pad {
						l.event(e, ev.Events)
					}
				}
			}
		}
		now := time.Now()
		l.expire(now)
		if l.lfd < 0 && l.pairs == 0 {
			l.exit()
			return
		}
		if now.Sub(yielded) >= yieldEvery {
			runtime.Gosched()
			yielded = now
		}
	}
}

// fail ends everything after epoll_wait failed, which it does only on a
// bug: the listener and every connection are closed.
func (l *loop) fail(err error) {
	l.r.log.Error("event loop failed: closing the route", "route", l.r.cfg.Name, "err", err)
	l.closeListener()
	for _, e := range l.ends {
		if e != nil {
			l.close(e.p)
		}
	}
	l.exit()
}

func (l *loop) exit() {
	l.r.mu.Lock()
	l.r.wakeLoop = nil
	l.r.mu.Unlock()
	l.release()
}

// woken looks at the route again: closed, or room in the queue.
func (l *loop) woken() {
	var b [8]byte
	unix.Read(l.wakeFd, b[:])
	r := l.r
	r.mu.Lock()
	closed := r.closed
	if r.full && r.q.len() < r.cfg.Queue {
		r.resumeAccept()
	}
	l.paused = r.full
	r.mu.Unlock()
	if closed {
		l.closeListener()
		return
	}
	l.arm()
}

// arm puts the listener in the epoll set, or takes it out, as accepting
// goes on or pauses. A failure is logged: accepting then stays as it was
// until the next change.
func (l *loop) arm() error {
	want := l.lfd >= 0 && !l.paused && l.retry.IsZero()
	if want == l.armed {
		return nil
	}
	var err error
	if want {
		err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Pad: tagListener})
	} else {
		err = unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, l.lfd, nil)
	}
	if err != nil {
		err = os.NewSyscallError("epoll_ctl", err)
		l.r.log.Error("listener", "route", l.r.cfg.Name, "accepting", want, "err", err)
		return err
	}
	l.armed = want
	return nil
}

// closeListener stops accepting for good (the route closed).
func (l *loop) closeListener() {
	if l.lfd < 0 {
		return
	}
	unix.Close(l.lfd) // out of the epoll set with it
	l.lfd, l.armed = -1, false
	close(l.stopped)
}

// accept takes one client per wake-up, as nginx does by default: the
// listener is level-triggered, so the next epoll_wait reports it again
// while more are waiting, and no accept4 fails with EAGAIN on the way of
// a connection.
func (l *loop) accept() {
	for {
		// The syscall package's accept4: x/sys/unix's asks the socket's
		// protocol (a getsockopt) on every IPv4 accept.
		fd, sa, err := syscall.Accept4(l.lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		switch err {
		case nil:
			l.arrival(fd, sa)
		case syscall.EINTR, syscall.ECONNABORTED:
			continue
		case syscall.EAGAIN:
		default:
			// Out of descriptors or memory: the kernel's backlog holds
			// the clients until the next try.
			l.r.log.Warn("accept", "route", l.r.cfg.Name, "err", os.NewSyscallError("accept4", err))
			l.retry = time.Now().Add(10 * time.Millisecond)
			l.arm()
		}
		return
	}
}

// arrival admits, queues or turns away a client just accepted.
func (l *loop) arrival(fd int, sa syscall.Sockaddr) {
	r := l.r
	var src netip.Addr
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		src = netip.AddrFrom4(a.Addr)
	case *syscall.SockaddrInet6:
		src = netip.AddrFrom16(a.Addr).Unmap()
	}
	now := time.Now()
	r.mu.Lock()
	v := r.arrive(src, now)
	dial := r.cfg.DialTimeout
	r.mu.Unlock()
	switch v {
	case sourceIsFull:
		unix.Close(fd) // a FIN, not a reset: the client sees the connection end
	case admitNow:
		l.proxy(fd, dial, now)
	default:
		f := os.NewFile(uintptr(fd), "client")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			r.log.Warn("queue a client", "route", r.cfg.Name, "err", err)
			return
		}
		r.mu.Lock()
		r.push(c.(*net.TCPConn), src, now)
		if r.q.len() >= r.cfg.Queue {
			r.pauseAccept()
		}
		l.paused = r.full
		r.mu.Unlock()
		l.arm()
	}
}

// timeout is how long epoll_wait may sleep: until the next deadline.
func (l *loop) timeout() int {
	next := l.retry
	if len(l.timers) > 0 && (next.IsZero() || l.timers[0].deadline.Before(next)) {
		next = l.timers[0].deadline
	}
	if next.IsZero() {
		return -1
	}
	d := time.Until(next)
	if d <= 0 {
		return 0
	}
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

// expire acts on the deadlines passed at now.
func (l *loop) expire(now time.Time) {
	if !l.retry.IsZero() && !now.Before(l.retry) {
		l.retry = time.Time{}
		l.arm()
	}
	for len(l.timers) > 0 && !l.timers[0].deadline.After(now) {
		p := l.timers.pop()
		if p.connecting {
			l.dialFailed(p, os.ErrDeadlineExceeded)
		} else {
			l.doneHandshake(p) // the upstream stayed silent: the slot goes, the proxying stays
		}
	}
}
