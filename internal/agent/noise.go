package agent

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"
)

// Logging of unauthenticated peers is rate-limited: anyone who can reach
// the port can produce refusals, and one log line each would let them fill
// the agent's disk. The first noiseBurst lines are written as they happen,
// then one more per noiseRefill; the rest are counted by source and reason
// and written as one summary line per noiseSummary while there are any.
// A steady flood thus costs at most noiseBurst lines plus 10 lines and 6
// summaries a minute, whatever its rate.
const (
	noiseBurst   = 10
	noiseRefill  = 6 * time.Second
	noiseSummary = 10 * time.Second
	// noiseSources bounds the sources counted one by one between two
	// summaries; further sources are counted together.
	noiseSources = 256
	// noiseShown is how many sources a summary line names.
	noiseShown = 5
)

// noiseLog writes the agent's lines about unauthenticated peers.
type noiseLog struct {
	logf func(format string, a ...any)

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
	bySource   map[netip.Addr]map[string]int
	others     map[string]int // reasons of sources past noiseSources
	since      time.Time
}

func newNoiseLog(logf func(string, ...any)) *noiseLog {
	return &noiseLog{logf: logf, tokens: noiseBurst, last: time.Now(), bySource: map[netip.Addr]map[string]int{}, others: map[string]int{}}
}

// note logs line about src, or counts it under class (a short reason
// such as "not an interlink client") when the budget is used up.
func (n *noiseLog) note(src netip.Addr, class, line string) {
	n.mu.Lock()
	now := time.Now()
	n.tokens = min(noiseBurst, n.tokens+float64(now.Sub(n.last))/float64(noiseRefill))
	n.last = now
	if n.tokens >= 1 {
		n.tokens--
		n.mu.Unlock()
		n.logf("%s", line)
		return
	}
	defer n.mu.Unlock()
	if n.suppressed == 0 {
		n.since = now
	}
	n.suppressed++
	m := n.bySource[src]
	if m == nil {
		if len(n.bySource) >= noiseSources {
			n.others[class]++
			return
		}
		m = map[string]int{}
		n.bySource[src] = m
	}
	m[class]++
}

// run writes a summary every noiseSummary while lines were suppressed,
// and a last one when ctx ends.
func (n *noiseLog) run(ctx context.Context) {
	t := time.NewTicker(noiseSummary)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.flush()
		case <-ctx.Done():
			n.flush()
			return
		}
	}
}

// flush writes one summary line of what was suppressed and resets the
// counts.
func (n *noiseLog) flush() {
	n.mu.Lock()
	if n.suppressed == 0 {
		n.mu.Unlock()
		return
	}
	total, since, bySource, others := n.suppressed, n.since, n.bySource, n.others
	n.suppressed, n.bySource, n.others = 0, map[netip.Addr]map[string]int{}, map[string]int{}
	n.mu.Unlock()

	type src struct {
		addr    netip.Addr
		count   int
		reasons map[string]int
	}
	srcs := make([]src, 0, len(bySource))
	for a, m := range bySource {
		c := 0
		for _, v := range m {
			c += v
		}
		srcs = append(srcs, src{a, c, m})
	}
	sort.Slice(srcs, func(i, j int) bool {
		if srcs[i].count != srcs[j].count {
			return srcs[i].count > srcs[j].count
		}
		return srcs[i].addr.Less(srcs[j].addr)
	})
	var parts []string
	rest, restSources := 0, 0
	for i, s := range srcs {
		if i >= noiseShown {
			rest += s.count
			restSources++
			continue
		}
		name := s.addr.String()
		if !s.addr.IsValid() {
			name = "(no peer)" // the agent's own accept errors
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", name, s.count, reasons(s.reasons)))
	}
	for _, v := range others {
		rest += v
	}
	if len(others) > 0 {
		restSources = -1 // not counted one by one
	}
	switch {
	case restSources > 0:
		parts = append(parts, fmt.Sprintf("%d from %d other sources", rest, restSources))
	case restSources < 0:
		parts = append(parts, fmt.Sprintf("%d from other sources", rest))
	}
	n.logf("unauthenticated peers: %d connections not logged one by one in the last %s: %s",
		total, time.Since(since).Round(time.Second), strings.Join(parts, "; "))
}

// reasons formats counts by reason, most frequent first.
func reasons(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	for i, k := range ks {
		ks[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(ks, ", ")
}
