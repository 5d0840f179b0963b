package gate

import (
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens a second, at most burst whole
// tokens saved up. The fraction of a token beyond burst is kept too: an
// admission loop woken late by the scheduler then catches up on the next
// token instead of losing the time it overslept, so the admission rate
// over time is the configured rate, and still no more than burst
// admissions happen at once.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int, now time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// set changes the rate and burst, keeping the tokens saved (capped).
func (b *bucket) set(rate float64, burst int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.rate, b.burst = rate, float64(burst)
	b.tokens = min(b.tokens, b.burst+carry)
}

// carry is the fraction of a token kept beyond burst.
const carry = 0.999

func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst+carry, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
}

// take takes a token if one is there, or says how long until one is.
func (b *bucket) take(now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}
