package agent

import (
	"net/netip"
	"sync"
	"time"
)

// rateCacheFor is how long a session's automatic send limit (AutoRate)
// is reused for the next session on the same local address. Finding it
// reads every interface and its addresses over netlink, and a mesh opens
// a session per pair: at 100 nodes that lookup was an eighth of an
// agent's CPU. An interface's speed rarely changes; a session opened
// within this long of a change gets the limit of the speed before it.
const rateCacheFor = 10 * time.Second

// rateCache remembers AutoRate per local address, for one Server (its
// sessions share a network namespace). The zero value is ready to use.
type rateCache struct {
	mu sync.Mutex
	m  map[netip.Addr]cachedRate
}

type cachedRate struct {
	bitsPerSec float64
	basis      string
	at         time.Time
}

// get returns AutoRate(local), from the cache when it is fresh.
func (c *rateCache) get(local netip.Addr, now time.Time) (float64, string) {
	c.mu.Lock()
	r, ok := c.m[local]
	c.mu.Unlock()
	if ok && now.Sub(r.at) < rateCacheFor && !now.Before(r.at) {
		return r.bitsPerSec, r.basis
	}
	bits, basis := AutoRate(local)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[netip.Addr]cachedRate{} // a bound, not an eviction policy: addresses are few
	}
	c.m[local] = cachedRate{bits, basis, now}
	return bits, basis
}
