package gate

import (
	"container/list"
	"net/netip"
	"time"
)

// waiter is a queued client connection.
type waiter struct {
	c       *clientConn
	source  netip.Addr
	arrived time.Time
	elem    *list.Element // in its source's FIFO
	done    bool          // admitted, abandoned or timed out: out of the queue
}

// fairQueue holds waiters FIFO per source and serves sources round-robin,
// so a source with many connections cannot starve one with few. Memory is
// bounded by the waiters: a source with none queued is forgotten.
type fairQueue struct {
	sources map[netip.Addr]*list.List
	ring    *list.List // sources with waiters, in service order
	where   map[netip.Addr]*list.Element
	n       int
}

func newFairQueue() *fairQueue {
	return &fairQueue{sources: map[netip.Addr]*list.List{}, ring: list.New(), where: map[netip.Addr]*list.Element{}}
}

func (q *fairQueue) len() int { return q.n }
func (q *fairQueue) depth(src netip.Addr) int {
	if l := q.sources[src]; l != nil {
		return l.Len()
	}
	return 0
}

func (q *fairQueue) push(w *waiter) {
	l := q.sources[w.source]
	if l == nil {
		l = list.New()
		q.sources[w.source] = l
		q.where[w.source] = q.ring.PushBack(w.source)
	}
	w.elem = l.PushBack(w)
	q.n++
}

// pop returns the oldest waiter of the next source in turn.
func (q *fairQueue) pop() *waiter {
	e := q.ring.Front()
	if e == nil {
		return nil
	}
	src := e.Value.(netip.Addr)
	l := q.sources[src]
	w := l.Remove(l.Front()).(*waiter)
	q.n--
	if l.Len() == 0 {
		q.forget(src)
	} else {
		q.ring.MoveToBack(e) // next time, the next source first
	}
	return w
}

// remove takes w out of the queue (it gave up or timed out).
func (q *fairQueue) remove(w *waiter) {
	l := q.sources[w.source]
	if l == nil || w.elem == nil {
		return
	}
	l.Remove(w.elem)
	w.elem = nil
	q.n--
	if l.Len() == 0 {
		q.forget(w.source)
	}
}

func (q *fairQueue) forget(src netip.Addr) {
	q.ring.Remove(q.where[src])
	delete(q.where, src)
	delete(q.sources, src)
}

// top returns up to n sources with the deepest queues and their depths.
func (q *fairQueue) top(n int) map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for src, l := range q.sources {
		if len(out) < n {
			out[src] = l.Len()
			continue
		}
		minSrc, minD := netip.Addr{}, int(^uint(0)>>1)
		for s, d := range out {
			if d < minD {
				minSrc, minD = s, d
			}
		}
		if l.Len() > minD {
			delete(out, minSrc)
			out[src] = l.Len()
		}
	}
	return out
}
