package gate

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// acceptLoop accepts through the net package, one goroutine pair per
// connection: where the event loop does not run (other systems, an
// upstream given by name).
func (r *route) acceptLoop(ctx context.Context) {
	for {
		r.mu.Lock()
		for !r.closed && r.q.len() >= r.cfg.Queue {
			r.pauseAccept()
			r.cond.Wait()
		}
		r.resumeAccept()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return
		}
		conn, err := r.ln.AcceptTCP()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			r.log.Warn("accept", "route", r.cfg.Name, "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.enqueue(conn)
	}
}

func (r *route) enqueue(conn *net.TCPConn) {
	src := netip.Addr{}
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		src = a.AddrPort().Addr().Unmap()
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.arrive(src, now) {
	case sourceIsFull:
		conn.Close() // a FIN, not a reset: the client sees the connection end
	case admitNow:
		up, dial := r.cfg.Upstream, r.cfg.DialTimeout
		r.proxied.Add(1)
		go func() {
			defer r.proxied.Done()
			r.proxy(conn, nil, up, dial)
		}()
	default:
		r.push(conn, src, now)
	}
}
