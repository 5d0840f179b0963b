package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// link is a node's SSH connection and the TCP connection it runs on.
//
// Cutting a link closes the TCP connection at once, whatever the SSH
// client is blocked on. Closing a session is not enough: Session.Close
// sends the channel's close under the channel's write lock, and a write
// stuck on a full TCP window (a path that drops what is sent) holds that
// lock until the kernel gives up on the connection, a quarter of an hour
// later (issue 27). Closing the socket fails the stuck write, and every
// session, channel and tunnel of the connection ends with it.
type link struct {
	*ssh.Client
	tcp     *net.TCPConn
	read    atomic.Int64 // bytes read from tcp
	written atomic.Int64 // bytes written to tcp (taken by the kernel)

	mu   sync.Mutex
	why  error // why it was cut; nil while it is up
	lost error // the first error reading tcp, other than the end of it
}

// tcpState is what the kernel knows of a connection's sending side.
type tcpState struct {
	// Acked is the bytes written that the peer acknowledged, over the
	// connection's life: TCP_INFO's bytes_acked (Linux 4.1) less the
	// SYN, or, where the kernel lacks it, the bytes written less those
	// still queued (SIOCOUTQ), the same figure. AckedByKernel says which.
	Acked         int64
	AckedByKernel bool
	Unacked       int   // segments sent and not acknowledged
	Queued        int64 // bytes written and not yet acknowledged, sent or not (SIOCOUTQ)
	Retransmits   int   // segments retransmitted, over the connection's life
}

// Keepalives on every link: a node that dies while the link is idle (a
// long check) is noticed within about a minute.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 15 * time.Second, Count: 4}

// userTimeoutFor is the TCP user timeout of a link whose transfers are cut
// after stall: longer, so that the watchdog, which names the cause, fires
// first on a transfer.
func userTimeoutFor(stall time.Duration) time.Duration { return max(time.Minute, 2*stall) }

// dialer is the dialer of links.
func dialer(stall time.Duration) *net.Dialer {
	return &net.Dialer{KeepAliveConfig: keepAlive, Control: userTimeout(userTimeoutFor(stall))}
}

// newLink runs the SSH handshake over tcp. On error tcp is left to the
// caller.
func newLink(tcp *net.TCPConn, addr string, cfg *ssh.ClientConfig) (*link, error) {
	l := &link{tcp: tcp}
	c, chans, reqs, err := ssh.NewClientConn(countConn{tcp, l}, addr, cfg)
	if err != nil {
		return nil, err
	}
	l.Client = ssh.NewClient(c, chans, reqs)
	return l, nil
}

// countConn is the link's TCP connection as SSH sees it: it counts what
// is read and written and keeps the first read error.
type countConn struct {
	*net.TCPConn
	l *link
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	c.l.read.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.l.mu.Lock()
		if c.l.lost == nil {
			c.l.lost = err
		}
		c.l.mu.Unlock()
	}
	return n, err
}

func (c countConn) Write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	c.l.written.Add(int64(n))
	return n, err
}

// cut closes the connection at once, with a reset, and records why. Only
// the first cut counts. It never blocks.
func (l *link) cut(why error) {
	l.mu.Lock()
	first := l.why == nil
	if first {
		l.why = why
	}
	l.mu.Unlock()
	if first {
		// A reset, not a FIN queued behind data that will never get
		// through: the node's sshd ends the session now, and nothing of
		// the connection lingers in this host's kernel.
		l.tcp.SetLinger(0)
		l.tcp.Close()
	}
}

// cutOnEnd cuts links when ctx ends, after calling before (when not nil)
// with ctx's cause, until the returned function is called. That function
// returns only once a cut under way has finished, so that whoever goes on
// with a link after it sees the link as it will stay.
func cutOnEnd(ctx context.Context, before func(cause error), links ...*link) (stop func()) {
	done := make(chan struct{})
	stopAfter := context.AfterFunc(ctx, func() {
		defer close(done)
		cause := context.Cause(ctx)
		if before != nil {
			before(cause)
		}
		for _, l := range links {
			l.cut(cause)
		}
	})
	return func() {
		if !stopAfter() {
			<-done
		}
	}
}

// cutBy is why the link was cut; nil while it is up.
func (l *link) cutBy() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why
}

// lostBy is why the connection failed under SSH (the kernel's TCP user
// timeout, a reset from the node); nil when it did not, or was cut here.
func (l *link) lostBy() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.why != nil || l.lost == nil {
		return nil
	}
	err := l.lost
	if errors.Is(err, syscall.ETIMEDOUT) {
		err = fmt.Errorf("%w: the node stopped acknowledging what was sent (the path to it stopped carrying data)", err)
	}
	return &lostError{err}
}

// remoteIP is the address the link reached.
func remoteIP(l *link) (netip.Addr, error) {
	ta, ok := l.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("ssh remote address %v is not TCP", l.RemoteAddr())
	}
	a, _ := netip.AddrFromSlice(ta.IP)
	return a.Unmap(), nil
}

// lostError is a node whose SSH connection failed during the run.
type lostError struct{ err error }

func (e *lostError) Error() string { return "ssh connection lost: " + e.err.Error() }
func (e *lostError) Unwrap() error { return e.err }
