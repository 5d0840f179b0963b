package gate

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

// TestQueueForgetsSources: a storm from random source addresses leaves no
// per-source state behind once its connections are served or dropped, so
// memory stays flat however many addresses a gate has ever seen.
func TestQueueForgetsSources(t *testing.T) {
	q := newFairQueue()
	rng := rand.New(rand.NewPCG(1, 2))
	var live []*waiter
	for round := 0; round < 50; round++ {
		for i := 0; i < 2000; i++ {
			var a [4]byte
			for j := range a {
				a[j] = byte(rng.IntN(256))
			}
			w := &waiter{source: netip.AddrFrom4(a)}
			q.push(w)
			live = append(live, w)
		}
		// Half are admitted in fair order, the rest give up.
		for i := 0; i < 1000; i++ {
			if w := q.pop(); w != nil {
				w.done = true
			}
		}
		for _, w := range live {
			if !w.done {
				q.remove(w)
				w.done = true
			}
		}
		live = live[:0]
		if q.len() != 0 || len(q.sources) != 0 || len(q.where) != 0 || q.ring.Len() != 0 {
			t.Fatalf("round %d: %d queued, %d sources, %d ring entries left", round, q.len(), len(q.sources), q.ring.Len())
		}
	}
}

// TestQueueRoundRobin: sources are served in turn, FIFO within each.
func TestQueueRoundRobin(t *testing.T) {
	q := newFairQueue()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	var order []string
	for i := 0; i < 3; i++ {
		q.push(&waiter{source: a, c: nil})
	}
	q.push(&waiter{source: b})
	for w := q.pop(); w != nil; w = q.pop() {
		order = append(order, w.source.String())
	}
	want := "10.0.0.1 10.0.0.2 10.0.0.1 10.0.0.1"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("service order %s, want %s", got, want)
	}
	top := newFairQueue()
	for i := 0; i < 5; i++ {
		top.push(&waiter{source: a})
	}
	top.push(&waiter{source: b})
	if d := top.top(1); len(d) != 1 || d[a] != 5 {
		t.Errorf("top(1) = %v", d)
	}
}
