package gate

import (
	"context"
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
	ln       *net.TCPListener // until an event loop takes its socket over
	addr     net.Addr
	m        *routeMetrics
	log      *slog.Logger
	full     bool // accepting paused on a full queue
	// spell is when the queue last filled, the start of an episode that
	// lasts until it drains to half (zero: none); pauses counts the times
	// accepting paused in it. Under a storm the queue fills again at each
	// admission: one episode, logged once at each end, not a pair of lines
	// per admission.
	spell  time.Time
	pauses int
	closed bool
	kick   chan struct{} // wakes the admission loop's wait for a token on reload
	// wakeLoop, while an event loop accepts for the route, asks it to look
	// at the route again (closed, room in the queue, new limits); called
	// with mu held, so that the loop cannot be gone meanwhile.
	wakeLoop func()
	// goroutines keeps the route off the event loop (tests of the other
	// path).
	goroutines bool
}

func newRoute(cfg Route, ln *net.TCPListener, m *routeMetrics, log *slog.Logger) *route {
	r := &route{cfg: cfg, q: newFairQueue(), bucket: newBucket(cfg.RatePerSec, cfg.Burst, time.Now()), ln: ln, addr: ln.Addr(),
		m: m, log: log, kick: make(chan struct{}, 1)}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// setLimits applies new limits; queued and proxied connections stay.
func (r *route) setLimits(l Limits) {
	r.mu.Lock()
	r.cfg.Limits = l
	r.bucket.set(l.RatePerSec, l.Burst, time.Now())
	r.cond.Broadcast()
	if r.wakeLoop != nil {
		r.wakeLoop() // a bigger queue may let it accept again
	}
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
		loop := r.wakeLoop != nil
		if loop {
			r.wakeLoop() // the loop closes the listening socket
		}
		r.mu.Unlock()
		if !loop {
			r.ln.Close()
		}
	})
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.admitLoop(ctx) }()
	if !r.runLoop() {
		r.acceptLoop(ctx)
	}
	wg.Wait()
	r.drain()
	r.proxied.Wait()
}

// verdict is what happens to a new connection.
type verdict int

const (
	queueIt      verdict = iota
	admitNow             // a token and a handshake slot are taken for it
	sourceIsFull         // its source has PerSource waiting: closed at once
)

// arrive decides for a connection from src accepted at now; r.mu is held.
// Nobody waiting and a token and a handshake slot free (the common case):
// it is admitted at once, without the waiting machinery.
func (r *route) arrive(src netip.Addr, now time.Time) verdict {
	r.m.accepted.Inc()
	if r.q.depth(src) >= r.cfg.PerSource {
		r.m.rejected.WithLabelValues("source_queue_full").Inc()
		return sourceIsFull
	}
	if r.q.len() == 0 && (r.cfg.MaxInflight == 0 || r.inflight < r.cfg.MaxInflight) {
		if ok, _ := r.bucket.take(now); ok {
			r.inflight++
			r.m.inflight.Set(float64(r.inflight))
			r.m.wait.Observe(0)
			return admitNow
		}
	}
	return queueIt
}

// push queues conn from src, accepted at now; r.mu is held. A client that
// goes away or waits past the queue timeout is dropped.
func (r *route) push(conn *net.TCPConn, src netip.Addr, now time.Time) {
	w := &waiter{source: src, arrived: now}
	w.c = newClientConn(conn, r.cfg.ClientBuffer, func() { r.drop(w, "abandoned") })
	r.q.push(w)
	r.m.queued.Set(float64(r.q.len()))
	time.AfterFunc(r.cfg.QueueTimeout, func() { r.drop(w, "timeout") })
	r.cond.Broadcast()
}

// pauseAccept notes that the queue is full and accepting stops; r.mu is
// held.
func (r *route) pauseAccept() {
	if r.full {
		return
	}
	r.full = true
	r.pauses++
	if r.spell.IsZero() {
		r.spell = time.Now()
		r.m.fullEpisodes.Inc()
		r.log.Warn("queue full: not accepting; the kernel backlog holds new connections", "route", r.cfg.Name, "queued", r.q.len())
	}
}

// resumeAccept notes that accepting goes on; r.mu is held. One slot freed
// while paused is a storm's refill; more, and the queue drained while
// paused (timeouts or abandons together) with maybe nothing to shrink it
// after: the episode may end here.
func (r *route) resumeAccept() {
	if r.full && !r.closed {
		r.full = false
		if r.q.len() < r.cfg.Queue-1 {
			r.endSpell()
		}
	}
}

// endSpell ends the episode of a full queue once it has drained to half;
// r.mu is held.
func (r *route) endSpell() {
	if r.spell.IsZero() || r.full || r.q.len() > r.cfg.Queue/2 {
		return
	}
	r.log.Info("queue has room again: accepting", "route", r.cfg.Name, "queued", r.q.len(),
		"full_for", time.Since(r.spell).Round(time.Millisecond).String(), "pauses", r.pauses)
	r.spell, r.pauses = time.Time{}, 0
}

// roomMade wakes whoever accepts after the queue shrank; r.mu is held.
func (r *route) roomMade() {
	r.endSpell()
	r.cond.Broadcast()
	if r.full && r.wakeLoop != nil {
		r.wakeLoop()
	}
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
	r.roomMade()
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
		r.roomMade() // accept again
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
