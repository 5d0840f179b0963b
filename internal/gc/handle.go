package gc

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// handle processes one authenticated datagram of size bytes from node p
// (its session verified, its source the address p announced). What does
// not fit the run (a block this node does not master, a slot out of range,
// a requester that is not the sender) is dropped and counted.
func (e *engine) handle(p int, m *msg, size int, now time.Time) {
	if !e.sized(m, size) {
		e.res.Dropped++
		return
	}
	ok := true
	switch m.Type {
	case msgHello:
		e.heard[p] = e.heard[p] || m.Flags&flagHeard != 0
		// A peer that does not know yet that we heard it hears back, at
		// most once per hello interval; one that knows sends no more.
		if m.Flags&flagDone == 0 && now.Sub(e.hello[p]) >= helloEvery/2 {
			e.sendHello(p, now)
		}
	case msgRequest:
		ok = e.onRequest(p, m)
	case msgForward:
		ok = e.onForward(p, m)
	case msgBlock:
		ok = e.onBlock(p, m, now)
	case msgLostQ:
		ok = e.onLostQ(p, m)
	case msgLostA:
		ok = e.onLostA(p, m)
	case msgPing:
		// Echo at the size received: never more than came in.
		e.emit(p, size, &msg{Type: msgPong, Requester: m.Requester, ID: m.ID, Stamp: m.Stamp})
	case msgPong:
		ok = e.onPong(p, size, m, now)
	}
	if !ok {
		e.res.Dropped++
	}
}

// sized reports whether a datagram of size bytes holding m has the size
// every node of the run gives that type: so a request, whose answer is
// larger, is one of the run's, and nothing else is answered with more
// bytes than came in.
func (e *engine) sized(m *msg, size int) bool {
	switch m.Type {
	case msgHello, msgLostQ, msgLostA:
		return size == HeaderLen
	case msgRequest, msgForward:
		return size == e.spec.Request
	case msgBlock:
		return int(m.Chunk) < len(e.chunks) && size == e.chunks[m.Chunk]
	case msgPing, msgPong:
		return size == PingSmall || size == PingLarge
	}
	return false
}

// mine reports whether a request-like message from p for m.Block is one this
// node, as the block's master, should answer.
func (e *engine) mine(p int, m *msg) bool {
	return int(m.Requester) == p && p != e.self && int(m.Block) < e.spec.Blocks &&
		masterOf(m.Block, e.n) == e.self && slotOf(m.ID) < e.spec.Outstanding
}

// onRequest: the master ships the block itself (2-way) when it holds it,
// else forwards the request to the holder (3-way). A current request
// moves ownership to the requester.
func (e *engine) onRequest(r int, m *msg) bool {
	if !e.mine(r, m) {
		return false
	}
	b, cur := m.Block, m.Flags&flagCurrent != 0
	e.curHold = e.heldFor(m)
	defer func() { e.curHold = hold{} }()
	h := int(e.holder[b])
	server := h
	if h == e.self || h == r {
		// h == r: the requester lost the block it held (a current
		// transfer that never arrived): the master ships it again.
		server = e.self
		e.ship(r, b, m.ID, 2, m.Flags)
		if !cur {
			e.holder[b] = uint8(e.self)
		}
	} else {
		e.emit(h, e.spec.Request, &msg{Type: msgForward, Flags: m.Flags, Hops: 3, Requester: uint8(r), Block: b, ID: m.ID})
	}
	if cur {
		e.holder[b] = uint8(r)
	}
	e.routes[r][slotOf(m.ID)] = route{gen: genOf(m.ID), server: uint8(server), set: true}
	e.res.Routed[r][server]++
	return true
}

// onForward: the holder ships the block straight to the requester; in
// current mode it gives its ownership up.
func (e *engine) onForward(master int, m *msg) bool {
	r := int(m.Requester)
	if master == e.self || r == e.self || r >= e.n || int(m.Block) >= e.spec.Blocks ||
		masterOf(m.Block, e.n) != master || (m.Hops != 2 || r != master) && m.Hops != 3 {
		return false
	}
	e.curHold = e.heldFor(m)
	defer func() { e.curHold = hold{} }()
	e.ship(r, m.Block, m.ID, int(m.Hops), m.Flags)
	if m.Flags&flagCurrent != 0 {
		e.setHeld(m.Block, false)
	}
	return true
}

// ship sends block b to requester r in its datagrams (chunks).
func (e *engine) ship(r int, b uint32, id uint64, hops int, flags uint8) {
	if !e.proven[r] || !e.peers[r].live() {
		return // the requester will time out and ask where its block went
	}
	for c, size := range e.chunks {
		e.emit(r, size, &msg{Type: msgBlock, Flags: flags & flagCurrent, Hops: uint8(hops), Requester: uint8(r),
			Server: uint8(e.self), Chunk: uint16(c), Chunks: uint16(len(e.chunks)), Block: b, ID: id})
	}
	e.res.BlocksServed++
	e.res.ChunksServed += int64(len(e.chunks))
	e.res.Served[r][hops-2]++
}

// onBlock completes a request when the last datagram of its block arrives,
// recording its receive time by server and hops.
func (e *engine) onBlock(s int, m *msg, now time.Time) bool {
	if int(m.Requester) != e.self || int(m.Server) != s || int(m.Chunks) != len(e.chunks) || m.Hops < 2 || m.Hops > 3 {
		return false
	}
	i := slotOf(m.ID)
	if i >= len(e.slots) {
		return false
	}
	sl := &e.slots[i]
	if !sl.busy || sl.lost || sl.id != m.ID || sl.block != m.Block {
		e.res.From[s].Late++
		return true
	}
	sl.got |= 1 << m.Chunk
	if sl.got != e.full {
		return true
	}
	sl.busy = false
	e.busy--
	d := now.Sub(sl.sent).Nanoseconds()
	hop := int(m.Hops) - 2
	if e.hists[s][hop] == nil {
		e.hists[s][hop] = newHist()
	}
	// A histogram refuses a value above its top (2 minutes, twice the
	// longest timeout: only a node stopped for minutes gets there): the top
	// keeps every block in the counts, which Validate holds to the events.
	e.hists[s][hop].RecordValue(min(d, histHighest))
	e.nodeHist[hop].RecordValue(min(d, histHighest))
	e.splitBlock(s, hop, d, m)
	mode := 0
	if sl.current {
		mode = 1
		if sl.master != e.self {
			e.setHeld(sl.block, true)
		}
	}
	e.res.Events[mode][hop].Count++
	e.res.Events[mode][hop].SumNs += d
	e.res.From[s].Received++
	return true
}

// onLostQ answers a requester asking where its request went: the server
// the master routed it to, or that it never saw it. The answer is no
// larger than the question.
func (e *engine) onLostQ(r int, m *msg) bool {
	if !e.mine(r, m) {
		return false
	}
	a := msg{Type: msgLostA, Requester: uint8(r), Server: uint8(e.self), Block: m.Block, ID: m.ID}
	if rt := e.routes[r][slotOf(m.ID)]; rt.set && rt.gen == genOf(m.ID) {
		a.Server, a.Flags = rt.server, flagSeen
	}
	e.emit(r, HeaderLen, &a)
	return true
}

// onLostA settles a lost block with its master's answer.
func (e *engine) onLostA(master int, m *msg) bool {
	i := slotOf(m.ID)
	if int(m.Requester) != e.self || int(m.Server) >= e.n || i >= len(e.slots) {
		return false
	}
	if s := &e.slots[i]; !s.busy || !s.lost || s.id != m.ID || s.master != master {
		return true // a repeated answer
	}
	if m.Flags&flagSeen != 0 {
		e.settle(i, &e.res.From[m.Server].Lost.Block)
	} else {
		e.settle(i, &e.res.From[master].Lost.Request)
	}
	return true
}

func (e *engine) onPong(t, size int, m *msg, now time.Time) bool {
	c := 0
	if size == PingLarge {
		c = 1
	} else if size != PingSmall {
		return false
	}
	p := &e.pings[t][c]
	if int(m.Requester) != e.self || !p.waiting || p.id != m.ID {
		return true // late: already counted lost
	}
	p.waiting = false
	e.res.Pings[t][c].add(now.Sub(p.sent))
	if e.pingHist[t][c] == nil {
		e.pingHist[t][c] = hdrhistogram.New(1, int64(2*time.Minute), 2)
	}
	e.pingHist[t][c].RecordValue(now.Sub(p.sent).Nanoseconds())
	return true
}

// finish fills the histograms' summaries into the node's result.
func (e *engine) finish() *NodeRun {
	for s := range e.hists {
		e.res.From[s].TwoWay = summary(e.hists[s][0])
		e.res.From[s].ThreeWay = summary(e.hists[s][1])
		if e.splits != nil {
			e.res.From[s].TwoWaySplit, e.res.From[s].ThreeWaySplit = e.splits[s][0].parts(), e.splits[s][1].parts()
		}
	}
	for t := range e.pingHist {
		for c, h := range e.pingHist[t] {
			if h != nil {
				e.res.Pings[t][c].P50Ns = h.ValueAtQuantile(50)
			}
		}
	}
	for h := range e.nodeHist {
		e.res.Hist[h] = encodeHist(e.nodeHist[h])
	}
	if e.res.IssueNs == 0 && !e.issueStart.IsZero() {
		e.res.IssueNs = time.Since(e.issueStart).Nanoseconds()
	}
	return e.res
}
