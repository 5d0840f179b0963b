package gate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// handshakeBound ends an upstream handshake's hold on an in-flight slot
// when the upstream sends nothing for this long.
const handshakeBound = 10 * time.Second

// route runs one listener.
type route struct {
	mu       sync.Mutex
	cond     *sync.Cond
	cfg      Route
	q        *fairQueue
	bucket   *bucket
	inflight int
	proxied  sync.WaitGroup
	ln       *net.TCPListener
	m        *routeMetrics
	log      *slog.Logger
	full     bool // accepting paused on a full queue
	closed   bool
	kick     chan struct{} // wakes the admission loop's wait for a token on reload
}

func newRoute(cfg Route, ln *net.TCPListener, m *routeMetrics, log *slog.Logger) *route {
	r := &route{cfg: cfg, q: newFairQueue(), bucket: newBucket(cfg.RatePerSec, cfg.Burst, time.Now()), ln: ln, m: m, log: log,
		kick: make(chan struct{}, 1)}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// setLimits applies new limits; queued and proxied connections stay.
func (r *route) setLimits(l Limits) {
	r.mu.Lock()
	r.cfg.Limits = l
	r.bucket.set(l.RatePerSec, l.Burst, time.Now())
	r.cond.Broadcast()
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *route) serve(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.closed = true
		r.cond.Broadcast()
		r.mu.Unlock()
		r.ln.Close()
	})
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.admitLoop(ctx) }()
	r.acceptLoop(ctx)
	wg.Wait()
	r.drain()
	r.proxied.Wait()
}

func (r *route) acceptLoop(ctx context.Context) {
	for {
		r.mu.Lock()
		for !r.closed && r.q.len() >= r.cfg.Queue {
			if !r.full {
				r.full = true
				r.m.fullEpisodes.Inc()
				r.log.Warn("queue full: not accepting; the kernel backlog holds new connections", "route", r.cfg.Name, "queued", r.q.len())
			}
			r.cond.Wait()
		}
		if r.full && !r.closed {
			r.full = false
			r.log.Info("queue has room again: accepting", "route", r.cfg.Name)
		}
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
		r.m.accepted.Inc()
		r.enqueue(conn)
	}
}

func (r *route) enqueue(conn *net.TCPConn) {
	src := netip.Addr{}
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		src = a.AddrPort().Addr().Unmap()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.q.depth(src) >= r.cfg.PerSource {
		r.m.rejected.WithLabelValues("source_queue_full").Inc()
		conn.Close() // a FIN, not a reset: the client sees the connection end
		return
	}
	now := time.Now()
	// Fast path: nobody waits and a token and a handshake slot are free,
	// so the connection is admitted at once, without the waiting machinery.
	if r.q.len() == 0 && (r.cfg.MaxInflight == 0 || r.inflight < r.cfg.MaxInflight) {
		if ok, _ := r.bucket.take(now); ok {
			r.inflight++
			r.m.inflight.Set(float64(r.inflight))
			up, dial := r.cfg.Upstream, r.cfg.DialTimeout
			r.proxied.Add(1)
			go func() {
				defer r.proxied.Done()
				r.m.wait.Observe(0)
				r.proxy(conn, nil, up, dial)
			}()
			return
		}
	}
	w := &waiter{source: src, arrived: now}
	w.c = newClientConn(conn, r.cfg.ClientBuffer, func() { r.drop(w, "abandoned") })
	r.q.push(w)
	r.m.queued.Set(float64(r.q.len()))
	timeout := r.cfg.QueueTimeout
	time.AfterFunc(timeout, func() { r.drop(w, "timeout") })
	r.cond.Broadcast()
}

// drop takes a waiter out of the queue because the client gave up or
// waited too long, and closes it: it was never dialled upstream.
func (r *route) drop(w *waiter, why string) {
	r.mu.Lock()
	if w.done {
		r.mu.Unlock()
		return
	}
	w.done = true
	r.q.remove(w)
	r.m.queued.Set(float64(r.q.len()))
	r.cond.Broadcast()
	r.mu.Unlock()
	if why == "timeout" {
		r.m.timeouts.Inc()
	} else {
		r.m.abandoned.Inc()
	}
	r.m.wait.Observe(time.Since(w.arrived).Seconds())
	w.c.release()
	w.c.conn.Close()
}

func (r *route) admitLoop(ctx context.Context) {
	for {
		r.mu.Lock()
		for !r.closed && (r.q.len() == 0 || (r.cfg.MaxInflight > 0 && r.inflight >= r.cfg.MaxInflight)) {
			r.cond.Wait()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		ok, wait := r.bucket.take(time.Now())
		if !ok {
			r.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-r.kick: // new limits: ask the bucket again
				t.Stop()
			case <-ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		w := r.q.pop()
		w.done = true
		r.inflight++
		r.m.queued.Set(float64(r.q.len()))
		r.m.inflight.Set(float64(r.inflight))
		r.cond.Broadcast() // room in the queue: accept again
		dial := r.cfg.DialTimeout
		up := r.cfg.Upstream
		r.mu.Unlock()
		r.proxied.Add(1)
		go func() {
			defer r.proxied.Done()
			r.admit(w, up, dial)
		}()
	}
}

func (r *route) doneHandshake() {
	r.mu.Lock()
	r.inflight--
	r.m.inflight.Set(float64(r.inflight))
	// Only the admission loop waits for a handshake slot, and only with a
	// bound and someone queued: waking it otherwise costs a thread wake-up
	// (a futex) on every connection's path for nothing.
	if r.cfg.MaxInflight > 0 && r.q.len() > 0 {
		r.cond.Broadcast()
	}
	r.mu.Unlock()
}

// admit dials the upstream for w and proxies until both sides are done.
func (r *route) admit(w *waiter, upstream string, dialTimeout time.Duration) {
	r.m.wait.Observe(time.Since(w.arrived).Seconds())
	buf, gone := w.c.release()
	client := w.c.conn
	if gone {
		r.m.abandoned.Inc()
		r.doneHandshake()
		client.Close()
		return
	}
	r.proxy(client, buf, upstream, dialTimeout)
}

// proxy dials the upstream for an admitted client, forwards what the
// client sent while it waited (buf) and proxies until both sides are done.
// It ends the connection's in-flight handshake.
func (r *route) proxy(client *net.TCPConn, buf []byte, upstream string, dialTimeout time.Duration) {
	r.m.admitted.Inc()
	start := time.Now()
	c, err := net.DialTimeout("tcp", upstream, dialTimeout)
	r.m.dial.Observe(time.Since(start).Seconds())
	if err != nil {
		r.m.upstreamErrors.Inc()
		r.log.Warn("upstream dial", "route", r.cfg.Name, "upstream", upstream, "err", err)
		r.doneHandshake()
		client.Close()
		return
	}
	up := c.(*net.TCPConn)
	defer up.Close()
	defer client.Close()
	if len(buf) > 0 {
		if _, err := up.Write(buf); err != nil {
			r.doneHandshake()
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, client) // splice(2) between TCP sockets on Linux
		up.CloseWrite()
	}()
	// The handshake holds its in-flight slot until the upstream's first
	// byte (the server's answer to the logon) or the bound.
	first := make([]byte, 16<<10)
	up.SetReadDeadline(time.Now().Add(handshakeBound))
	n, err := up.Read(first)
	up.SetReadDeadline(time.Time{})
	r.doneHandshake()
	if n > 0 {
		if _, werr := client.Write(first[:n]); werr != nil {
			err = werr
		}
	}
	// Go on unless the upstream ended: an upstream that stayed silent
	// past the bound may simply wait for the client.
	if err == nil || isTimeout(err) {
		io.Copy(client, up)
	}
	client.CloseWrite()
	wg.Wait()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// drain closes every connection still queued at shutdown.
func (r *route) drain() {
	r.mu.Lock()
	var ws []*waiter
	for w := r.q.pop(); w != nil; w = r.q.pop() {
		w.done = true
		ws = append(ws, w)
	}
	r.m.queued.Set(0)
	r.mu.Unlock()
	for _, w := range ws {
		w.c.release()
		w.c.conn.Close()
	}
}
