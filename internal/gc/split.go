package gc

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/wire"
)

// The split of each receive time into its parts, as bench --mode blocks
// splits a round trip (traffic's split.go), from the kernel's software
// receive stamps at every node: the requester's wake-up (from the stamp of
// the block's last datagram to the read), the servers' wake-ups (from the
// stamp of the request, and of the forward on a 3-way trip, to the read),
// their work (from those reads to the sends) and the rest: network and
// stacks, two crossings on a 2-way trip, three on a 3-way one. The nodes
// that handle a request add their wake-ups and work into the forward and
// the block (flagHeld), so the requester splits each block by itself.

// PairParts are the parts of the receive times from one server, by the
// requester; a part is absent where no stamp was given (never 0).
type PairParts struct {
	RequesterWake    *latency.Summary `json:"requester_wake,omitempty"`
	ServerWake       *latency.Summary `json:"server_wake,omitempty"`
	ServerWork       *latency.Summary `json:"server_work,omitempty"`
	NetworkAndStacks *latency.Summary `json:"network_and_stacks,omitempty"`
	// Unheld counts blocks that came without the servers' times (an
	// agent from before the split, or a node without stamps).
	Unheld int64 `json:"unheld,omitempty"`
}

// ReceivePaths are a node's receive paths with its reader awake (see
// traffic.ReceivePathAwake), ns, taken out of its wake-ups and so counted
// in network and stacks: of a request's (or forward's) datagram and of a
// block's. Err says why they were not measured (both 0).
type ReceivePaths struct {
	RequestNs int64  `json:"request_ns,omitempty"`
	BlockNs   int64  `json:"block_ns,omitempty"`
	Err       string `json:"error,omitempty"`
}

// splitHists are one server's and hop count's parts at the requester.
type splitHists struct {
	reqWake, srvWake, srvWork, rest *hdrhistogram.Histogram
	unheld                          int64
}

// hold is what the node handling a request knows of it while it emits
// the forward or the block: the request's stamp and what the nodes before
// it held it (the master's, for a forward's block).
type hold struct {
	on       bool
	rx       int64 // the kernel's receive stamp of the request or forward
	prevWake int64
	prevWork int64
	readAt   int64 // when its batch was read
}

// heldTimes splits a flagHeld stamp into wake-ups and work, ns.
func heldTimes(stamp int64) (wake, work int64) {
	return int64(uint64(stamp) >> 32), int64(uint64(stamp) & 0xffffffff)
}

// heldStamp packs wake-ups and work into a stamp, each capped at 4.29 s.
func heldStamp(wake, work int64) int64 {
	c := func(v int64) uint64 { return uint64(min(max(v, 0), 0xffffffff)) }
	return int64(c(wake)<<32 | c(work))
}

// heldFor starts the hold of a request or forward m just read (stamped
// e.rx); a 3-way forward without its master's times starts none (its
// block's parts would miss the master's).
func (e *engine) heldFor(m *msg) hold {
	if e.splits == nil || e.rx == 0 {
		return hold{}
	}
	h := hold{on: true, rx: e.rx, readAt: e.readAt}
	if m.Type == msgForward && m.Hops == 3 {
		// A 2-way forward comes from the requester, which masters the
		// block: no node held its request before.
		if m.Flags&flagHeld == 0 {
			return hold{}
		}
		h.prevWake, h.prevWork = heldTimes(m.Stamp)
	}
	return h
}

// stampHeld writes into the queued forwards and blocks how long their
// requests were held, to now (just before the send): the flag and the
// stamp after the session header, which the session tag does not cover.
func (e *engine) stampHeld(outs []outMsg) {
	now := time.Now().UnixNano()
	for i := range outs {
		h := &outs[i].hold
		if !h.on || h.readAt < h.rx || now < h.readAt {
			continue
		}
		b := outs[i].buf[wire.HeaderLen:outs[i].n]
		var m msg
		if m.parse(b) != nil {
			continue
		}
		m.Flags |= flagHeld
		m.Stamp = heldStamp(h.prevWake+max(h.readAt-h.rx-e.awake[0], 0), h.prevWork+now-h.readAt)
		m.put(b)
	}
}

// splitBlock records, at the requester, a block from server s with hop
// index hop that took d ns, completed by a datagram stamped e.rx and
// carrying m's held times.
func (e *engine) splitBlock(s, hop int, d int64, m *msg) {
	if e.splits == nil || e.rx == 0 || e.readAt < e.rx {
		return
	}
	sh := e.splits[s][hop]
	if sh == nil {
		sh = &splitHists{reqWake: newHist(), srvWake: newHist(), srvWork: newHist(), rest: newHist()}
		e.splits[s][hop] = sh
	}
	wake := max(e.readAt-e.rx-e.awake[1], 0)
	sh.reqWake.RecordValue(min(wake, histHighest))
	if m.Flags&flagHeld == 0 {
		sh.unheld++
		return
	}
	sw, sk := heldTimes(m.Stamp)
	sh.srvWake.RecordValue(min(sw, histHighest))
	sh.srvWork.RecordValue(min(sk, histHighest))
	sh.rest.RecordValue(min(max(d-wake-sw-sk, 0), histHighest))
}

// idleSplits sets how often the hosts' CPUs went to sleep per block
// received (each host once, all nodes' hosts known) and, below one, takes
// the wake-up verdict off every pair: on CPUs kept awake the wake-up parts
// are the receive path and scheduling, no idle setting's doing.
func (r *Report) idleSplits(runs []*NodeRun) {
	if r.Total.Received == 0 {
		return
	}
	var entries int64
	hosts := map[string]bool{}
	for _, nr := range runs {
		if nr == nil || nr.Idle == nil {
			return
		}
		if !hosts[nr.Host] || nr.Host == "" {
			hosts[nr.Host] = true
			entries += nr.Idle.SleepEntries
		}
	}
	per := float64(entries) / float64(r.Total.Received)
	for i := range r.Pairs {
		for _, sp := range []*traffic.Split{r.Pairs[i].TwoWaySplit, r.Pairs[i].ThreeWaySplit} {
			if sp != nil {
				sp.IdleEntriesPerBlock, sp.Hosts = &per, len(hosts)
				sp.WakeDominant = sp.WakeDominant && per >= 1
			}
		}
	}
}

// receivePaths gives each pair's splits the receive paths awake of the
// nodes that measured them: the requester's (of a block) on both, the
// server's (of a request) on the 2-way one; a 3-way trip's server parts
// are two nodes', which vary from block to block.
func (r *Report) receivePaths(runs []*NodeRun) {
	byName := map[string]*ReceivePaths{}
	for i, nr := range runs {
		if nr != nil && nr.ReceivePath != nil && nr.ReceivePath.Err == "" && i < len(r.Nodes) {
			byName[r.Nodes[i].Name] = nr.ReceivePath
		}
	}
	ns := func(v int64) *int64 {
		if v <= 0 {
			return nil
		}
		return &v
	}
	for i := range r.Pairs {
		p := &r.Pairs[i]
		req, srv := byName[p.Requester], byName[p.Server]
		for hop, sp := range []*traffic.Split{p.TwoWaySplit, p.ThreeWaySplit} {
			if sp == nil {
				continue
			}
			if req != nil {
				sp.RequesterReceivePath = ns(req.BlockNs)
			}
			if srv != nil && hop == 0 {
				sp.ResponderReceivePath = ns(srv.RequestNs)
			}
		}
	}
}

// split is pp as the pair's split of the receive times rtt; nil when pp
// is.
func (pp *PairParts) split(rtt *latency.Summary) *traffic.Split {
	if pp == nil {
		return nil
	}
	return traffic.NewSplit(rtt, pp.RequesterWake, pp.ServerWake, pp.ServerWork, pp.NetworkAndStacks)
}

// parts summarises one server's and hop count's parts; nil when none.
func (sh *splitHists) parts() *PairParts {
	if sh == nil {
		return nil
	}
	return &PairParts{RequesterWake: summary(sh.reqWake), ServerWake: summary(sh.srvWake), ServerWork: summary(sh.srvWork),
		NetworkAndStacks: summary(sh.rest), Unheld: sh.unheld}
}
