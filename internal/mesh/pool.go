package mesh

import (
	"sync"
	"time"

	"github.com/interlink/interlink/internal/agent"
)

// poolIdle is how many idle control sessions this host keeps per node for
// its next pairs. A session costs both ends a handshake (an HMAC challenge
// each way) and the agent a session set-up; a mesh of 100 nodes runs 4,950
// pairs. Each pair holds one session on each of its agents, at most
// MaxPerNode pairs per node, so with these the agents' 16 sessions still
// leave room.
const poolIdle = 2

// pool keeps this host's idle sessions, per node index. Safe for
// concurrent use; close closes what it holds.
type pool struct {
	mu   sync.Mutex
	idle map[int][]pooled
}

type pooled struct {
	c  *agent.Client
	at time.Time // when dialled
}

// fresh reports whether a session dialled at may serve one more pair: not
// past half its granted MaxDuration (the agent ends it then).
func fresh(c *agent.Client, at, now time.Time) bool {
	return c.Limits.MaxDuration <= 0 || now.Sub(at) < c.Limits.MaxDuration/2
}

// get returns an idle session to node i and when it was dialled, or nil.
func (p *pool) get(i int) (*agent.Client, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := len(p.idle[i]); n > 0; n = len(p.idle[i]) {
		s := p.idle[i][n-1]
		p.idle[i] = p.idle[i][:n-1]
		if fresh(s.c, s.at, time.Now()) {
			return s.c, s.at
		}
		go s.c.Close()
	}
	return nil, time.Time{}
}

// put keeps c, dialled at, for node i's next pair, or closes it when the
// node has poolIdle already or c is not fresh.
func (p *pool) put(i int, c *agent.Client, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[i]) >= poolIdle || !fresh(c, at, time.Now()) {
		c.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[int][]pooled{}
	}
	p.idle[i] = append(p.idle[i], pooled{c, at})
}

// close closes every idle session.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range p.idle {
		for _, s := range ss {
			wg.Add(1)
			go func() { defer wg.Done(); s.c.Close() }()
		}
	}
	wg.Wait()
	p.idle = nil
}
