//go:build linux

package gate

import (
	"container/heap"
	"math"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pair is an admitted client and its upstream connection in the loop.
type pair struct {
	c, u       end
	connecting bool // the upstream's connect is in progress
	handshake  bool // holds an in-flight handshake slot (until the upstream's first byte)
	closed     bool
	dialStart  time.Time
	deadline   time.Time // the dial's, then the handshake's bound
	ti         int       // index in the loop's timers; -1: none
}

// end is one socket of a pair and what was read from it: bytes move from
// a socket into a pipe and from the pipe into the peer's socket, never
// through user space. An end holds a pipe only while bytes are in it.
type end struct {
	fd   int
	gen  int32
	p    *pair
	peer *end
	pipe *pipe
	n    int  // bytes in the pipe
	eof  bool // the socket's reader ended
	shut bool // and that went on to the peer (its writer shut down)
}

// sockopts are the options net.Dial and Accept set on a TCP socket: no
// Nagle delay, keep-alive probes after 15 s idle, every 15 s, 9 of them.
var sockopts = [...][3]int{
	{unix.IPPROTO_TCP, unix.TCP_NODELAY, 1},
	{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 15},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9},
}

func setSockopts(fd int, opts ...[3]int) {
	for _, o := range opts {
		unix.SetsockoptInt(fd, o[0], o[1], o[2]) // as net does, a failure is no reason to refuse
	}
}

// proxy dials the upstream for client socket cfd, admitted at now, and
// leaves the rest to the loop's events.
func (l *loop) proxy(cfd int, dialTimeout time.Duration, now time.Time) {
	l.r.proxied.Add(1)
	l.r.m.admitted.Inc()
	l.pairs++
	p := &pair{handshake: true, dialStart: now, ti: -1}
	p.c = end{fd: cfd, p: p, peer: &p.u}
	p.u = end{fd: -1, p: p, peer: &p.c}
	l.track(&p.c)
	ufd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		l.dialFailed(p, os.NewSyscallError("socket", err))
		return
	}
	p.u.fd = ufd
	l.track(&p.u)
	err = unix.Connect(ufd, l.up)
	if err != nil && err != unix.EINPROGRESS {
		l.dialFailed(p, os.NewSyscallError("connect", err))
		return
	}
	// All the options before any byte can move (forwardEarly may send
	// the client's first bytes right below): whoever sees a byte of this
	// connection can rely on the socket being as net.Dial makes it.
	setSockopts(ufd, sockopts[:]...)
	for _, e := range []*end{&p.c, &p.u} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(e.fd), Pad: e.gen}
		if rerr := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, e.fd, &ev); rerr != nil {
			l.dialFailed(p, os.NewSyscallError("epoll_ctl", rerr))
			return
		}
	}
	if err == nil {
		l.connected(p, now)
		return
	}
	p.connecting = true
	if dialTimeout > 0 {
		l.timers.set(p, now.Add(dialTimeout))
	}
	l.forwardEarly(p)
}

// forwardEarly sends what the client has sent so far while the connect is
// in progress. Over loopback (and often a LAN) the connect has completed
// within the connect call and the client's first bytes are there, which
// saves a round through epoll_wait; a socket still connecting refuses
// them (EAGAIN) and they wait in the pipe for the connect to complete.
func (l *loop) forwardEarly(p *pair) {
	c := &p.c
	pp, err := l.getPipe()
	if err != nil {
		return // the usual way, once connected, says why
	}
	c.pipe = pp
	n, err := unix.Splice(c.fd, nil, pp.w, nil, pipeSize, spliceFlags)
	if err != nil || n <= 0 {
		l.putPipe(c) // nothing yet, or the client's end: the usual way sees it
		return
	}
	c.n = int(n)
	n, err = unix.Splice(pp.r, nil, p.u.fd, nil, c.n, spliceFlags)
	switch {
	case n > 0:
		c.n -= int(n)
		l.connected(p, time.Now())
	case err != nil && err != unix.EAGAIN && err != unix.EINTR:
		// The error is the connect's: reading it clears it from the
		// socket, so it is reported here.
		l.dialFailed(p, os.NewSyscallError("connect", err))
	}
}

// track files e under its descriptor with a new generation.
func (l *loop) track(e *end) {
	if e.fd >= len(l.ends) {
		ends := make([]*end, 2*e.fd+64)
		copy(ends, l.ends)
		l.ends = ends
	}
	if l.gen == math.MaxInt32 {
		l.gen = 0
	}
	l.gen++
	e.gen = l.gen
	l.ends[e.fd] = e
}

func (l *loop) event(e *end, ev uint32) {
	p := e.p
	if p.connecting {
		// The client waits in its socket (and TCP flow control) until
		// the upstream answers the connect.
		if e == &p.u && ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.finishConnect(p, ev)
		}
		return
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.pump(e)
	}
	// An edge reports every state, writable included: only a peer with
	// bytes waiting for this socket has anything to do then.
	if e.peer.n > 0 && ev&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.pump(e.peer)
	}
}

func (l *loop) finishConnect(p *pair, ev uint32) {
	soerr, err := unix.GetsockoptInt(p.u.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch {
	case err != nil:
		l.dialFailed(p, os.NewSyscallError("getsockopt", err))
	case soerr != 0:
		l.dialFailed(p, os.NewSyscallError("connect", unix.Errno(soerr)))
	case ev&unix.EPOLLOUT != 0:
		l.connected(p, time.Now())
	}
}

func (l *loop) connected(p *pair, now time.Time) {
	p.connecting = false
	l.r.m.dial.Observe(now.Sub(p.dialStart).Seconds())
	l.timers.set(p, now.Add(handshakeBound))
	l.pump(&p.c) // what the client sent meanwhile
	l.pump(&p.u)
}

func (l *loop) dialFailed(p *pair, err error) {
	r := l.r
	r.m.upstreamErrors.Inc()
	r.log.Warn("upstream dial", "route", r.cfg.Name, "upstream", r.cfg.Upstream, "err", &net.OpError{Op: "dial", Net: "tcp", Addr: l.upAddr, Err: err})
	l.close(p)
}

// doneHandshake gives p's in-flight slot back.
func (l *loop) doneHandshake(p *pair) {
	if p.handshake {
		p.handshake = false
		l.timers.remove(p)
		l.r.doneHandshake()
	}
}

const (
	spliceFlags = unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK
	// pipeSize is the capacity asked for a pipe, as the runtime asks for
	// its splice pipes (the default /proc/sys/fs/pipe-max-size); what the
	// system grants instead only costs more calls.
	pipeSize  = 1 << 20
	idlePipes = 16
)

// pump moves what src's socket has to its peer until src has nothing
// more or the peer takes nothing more; an event on either resumes it.
func (l *loop) pump(src *end) {
	p, dst := src.p, src.peer
	for !p.closed {
		if src.n > 0 {
			n, err := unix.Splice(src.pipe.r, nil, dst.fd, nil, src.n, spliceFlags)
			if n > 0 {
				src.n -= int(n)
			}
			if src == &p.u {
				l.doneHandshake(p) // the upstream's first bytes, once on their way to the client
			}
			switch err {
			case nil, unix.EINTR:
				continue
			case unix.EAGAIN:
				return // dst is full: its EPOLLOUT resumes
			default:
				l.close(p)
				return
			}
		}
		if src.eof {
			l.forwardEOF(src)
			return
		}
		if src.pipe == nil {
			pp, err := l.getPipe()
			if err != nil {
				l.r.log.Warn("proxy", "route", l.r.cfg.Name, "err", err)
				l.close(p)
				return
			}
			src.pipe = pp
		}
		n, err := unix.Splice(src.fd, nil, src.pipe.w, nil, pipeSize, spliceFlags)
		switch {
		case err == unix.EAGAIN:
			l.putPipe(src)
			return
		case err == unix.EINTR:
		case err != nil:
			l.close(p)
			return
		case n == 0:
			src.eof = true
			l.putPipe(src)
		default:
			src.n = int(n)
		}
	}
}

// forwardEOF shuts the peer's writer after src's reader ended and all it
// sent went on; when the other way is done too, the pair is closed (the
// close sends the last FIN).
func (l *loop) forwardEOF(src *end) {
	if src.shut {
		return
	}
	src.shut = true
	if src.peer.shut {
		l.close(src.p)
		return
	}
	unix.Shutdown(src.peer.fd, unix.SHUT_WR)
}

func (l *loop) close(p *pair) {
	if p.closed {
		return
	}
	p.closed = true
	l.doneHandshake(p)
	l.timers.remove(p)
	for _, e := range []*end{&p.c, &p.u} {
		if e.fd >= 0 {
			l.ends[e.fd] = nil
			unix.Close(e.fd) // out of the epoll set with it
		}
		if e.n > 0 {
			e.pipe.close() // bytes that cannot go anywhere now
			e.pipe, e.n = nil, 0
		}
		l.putPipe(e)
	}
	l.pairs--
	l.r.proxied.Done()
}

type pipe struct{ r, w int }

func (p *pipe) close() {
	unix.Close(p.r)
	unix.Close(p.w)
}

func (l *loop) getPipe() (*pipe, error) {
	if n := len(l.pipes); n > 0 {
		p := l.pipes[n-1]
		l.pipes = l.pipes[:n-1]
		return p, nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	unix.FcntlInt(uintptr(fds[0]), unix.F_SETPIPE_SZ, pipeSize)
	return &pipe{r: fds[0], w: fds[1]}, nil
}

// putPipe takes e's empty pipe back for the next end.
func (l *loop) putPipe(e *end) {
	if e.pipe == nil {
		return
	}
	if len(l.pipes) < idlePipes {
		l.pipes = append(l.pipes, e.pipe)
	} else {
		e.pipe.close()
	}
	e.pipe = nil
}

// timers is a min-heap of pairs by deadline (each pair at most once).
type timers []*pair

func (t timers) Len() int           { return len(t) }
func (t timers) Less(i, j int) bool { return t[i].deadline.Before(t[j].deadline) }
func (t timers) Swap(i, j int) {
	t[i], t[j] = t[j], t[i]
	t[i].ti, t[j].ti = i, j
}
func (t *timers) Push(x any) {
	p := x.(*pair)
	p.ti = len(*t)
	*t = append(*t, p)
}
func (t *timers) Pop() any {
	old := *t
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*t = old[:len(old)-1]
	p.ti = -1
	return p
}

func (t *timers) set(p *pair, at time.Time) {
	p.deadline = at
	if p.ti >= 0 {
		heap.Fix(t, p.ti)
	} else {
		heap.Push(t, p)
	}
}

func (t *timers) remove(p *pair) {
	if p.ti >= 0 {
		heap.Remove(t, p.ti)
	}
}

func (t *timers) pop() *pair { return heap.Pop(t).(*pair) }
