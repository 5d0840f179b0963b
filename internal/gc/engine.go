package gc

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/wire"
)

// Peer is a node of the run as one engine knows it: the keys of the pair's
// session and the data address the peer announced over it. The engine's
// own node is a Peer too (its pings to itself), with keys of its own.
type Peer struct {
	Session uint64         // the pair's session id, in every datagram's header
	Seal    *wire.Sealer   // tags what this node sends to the peer
	Open    *wire.Opener   // verifies what the peer sends
	Addr    netip.AddrPort // the peer's data endpoint
	// Live, when set, turns false when the pair's session ends; the
	// engine then drops the peer's datagrams and sends it nothing.
	Live *atomic.Bool
}

func (p *Peer) live() bool { return p.Live == nil || p.Live.Load() }

// phases of an engine.
const (
	phaseSetup = iota // hellos until every peer is proven
	phaseIssue        // requests and pings
	phaseDrain        // no new requests: the last ones complete or are lost
	phaseServe        // serving the others until stopped
)

type slot struct {
	id      uint64
	sent    time.Time
	block   uint32
	master  int
	to      int // the master, or the holder when this node masters the block
	current bool
	noPath  bool // not sent: the node it was for was never proven
	got     uint32
	busy    bool
	// lost: not whole in time; the slot waits for the master to say
	// where the request went (asked, tries questions so far).
	lost  bool
	asked time.Time
	tries int
}

type route struct {
	gen    uint64
	server uint8
	set    bool
}

// ping is one size of pings to one target: the last one sent and when
// the next is due.
type ping struct {
	id      uint64
	sent    time.Time
	waiting bool
	due     time.Time
}

// outMsg is a datagram waiting to be sent: buf[:n] to node to.
type outMsg struct {
	to   int
	n    int
	buf  []byte
	hold hold // a forward's or block's request, held (split.go)
}

// engine is one node's state in a run. It is driven by one thread (loop):
// no locks. The node is at the same time a requester, the master of its
// share of the blocks and a holder that ships blocks.
type engine struct {
	spec   Spec
	self   int
	n      int
	mtu    int
	peers  []Peer
	proven []bool // an authenticated datagram came from the peer's address
	heard  []bool // the peer said it heard from us
	hello  []time.Time
	chunks []int
	full   uint32

	bySession map[uint64]int

	pick   *picker
	holder []uint8  // blocks mastered here: the node that holds each
	held   []uint64 // blocks held here in current mode (bit set)
	routes [][]route
	slots  []slot
	gens   []uint64
	busy   int
	pings  [][2]ping
	pingID uint64

	hists    [][2]*hdrhistogram.Histogram // [server][hops-2]
	pingHist [][2]*hdrhistogram.Histogram // [target][size]
	nodeHist [2]*hdrhistogram.Histogram

	// splits are the parts of the receive times by [server][hops-2]
	// (split.go); nil with the split off. rx is the kernel's receive
	// stamp of the datagram being handled (0: none), readAt when its
	// batch was read (ns, the stamps' clock); curHold the hold that the
	// forwards and blocks being emitted carry.
	splits [][2]*splitHists
	// awake is the node's receive path with its reader awake, ns, of a
	// request's or forward's datagram [0] and a block's [1]
	// (traffic.ReceivePathAwake), taken out of its wake-ups; 0: unknown.
	awake   [2]int64
	rx      int64
	readAt  int64
	curHold hold

	outs  []outMsg
	nOut  int
	bytes int
	// send hands the pending datagrams to the socket; set by the loop.
	send func(outs []outMsg) error
	err  error

	phase                       int
	start, issueStart, issueEnd time.Time
	res                         *NodeRun
	onDrained                   func()
	maxOut, maxPacket           int
	// what crossed the socket, for the agent's session log
	pktsIn, bytesIn, pktsOut, bytesOut int64
}

// maxBatch and batchBytes bound a batch of sends (sendmmsg).
const (
	maxBatch   = 64
	batchBytes = 512 << 10
)

func newEngine(spec Spec, self int, peers []Peer, mtu int, seed uint64, now time.Time) *engine {
	n := len(peers)
	e := &engine{spec: spec, self: self, n: n, mtu: mtu, peers: peers,
		proven: make([]bool, n), heard: make([]bool, n), hello: make([]time.Time, n),
		chunks: Chunks(spec.Block), pick: newPicker(spec, seed),
		holder: make([]uint8, spec.Blocks), held: make([]uint64, (spec.Blocks+63)/64),
		routes: make([][]route, n), slots: make([]slot, spec.Outstanding), gens: make([]uint64, spec.Outstanding),
		pings: make([][2]ping, n), hists: make([][2]*hdrhistogram.Histogram, n), pingHist: make([][2]*hdrhistogram.Histogram, n),
		nodeHist: [2]*hdrhistogram.Histogram{newHist(), newHist()},
		phase:    phaseSetup, start: now,
	}
	e.full = uint32(1)<<len(e.chunks) - 1
	if !spec.NoSplit {
		e.splits = make([][2]*splitHists, n)
	}
	for b := range e.holder {
		e.holder[b] = uint8(masterOf(uint32(b), n)) // the master reads it first
	}
	for i := range e.routes {
		e.routes[i] = make([]route, spec.Outstanding)
	}
	e.proven[self], e.heard[self] = true, true
	e.bySession = make(map[uint64]int, n)
	for i, p := range peers {
		e.bySession[p.Session] = i
	}
	e.maxPacket = max(e.chunks[0], spec.Request, PingLarge, HeaderLen)
	e.maxOut = max(1, min(maxBatch, batchBytes/e.maxPacket))
	e.outs = make([]outMsg, e.maxOut)
	for i := range e.outs {
		e.outs[i].buf = make([]byte, e.maxPacket)
	}
	e.res = &NodeRun{Index: self, MTU: mtu, From: make([]FromStats, n), Routed: make([][]int64, n),
		Served: make([][2]int64, n), Pings: make([][2]PingStats, n)}
	for i := range e.res.Routed {
		e.res.Routed[i] = make([]int64, n)
	}
	return e
}

func (e *engine) isHeld(b uint32) bool { return e.held[b/64]&(1<<(b%64)) != 0 }
func (e *engine) setHeld(b uint32, on bool) {
	if on {
		e.held[b/64] |= 1 << (b % 64)
	} else {
		e.held[b/64] &^= 1 << (b % 64)
	}
}

// receive takes a datagram that arrived from the address from: it must be
// sealed with the keys of a live peer's session and come from the data
// address that peer announced; everything else is dropped and counted.
func (e *engine) receive(pkt []byte, from netip.AddrPort, now time.Time) {
	h, err := wire.ParseHeader(pkt)
	p, ok := e.bySession[h.Session]
	// Nothing of the run is larger than maxPacket (the loop's buffers): a
	// larger datagram is no one's, and an echo of it would not fit.
	if len(pkt) < HeaderLen || len(pkt) > e.maxPacket || err != nil || !ok || !e.peers[p].live() || from != e.peers[p].Addr {
		e.res.Dropped++
		return
	}
	var m msg
	if h, err := e.peers[p].Open.Open(pkt); err != nil || h.Kind != dataKind || m.parse(pkt[wire.HeaderLen:]) != nil {
		e.res.Dropped++
		return
	}
	e.proven[p] = true
	e.pktsIn++
	e.bytesIn += int64(len(pkt))
	e.handle(p, &m, len(pkt), now)
}

// emit queues a datagram of size bytes holding m to node to, sealed with
// the pair's keys, and sends the queue when it is full.
//
// Here the run keeps the agent's promises: nothing goes to a peer whose
// session ended, and nothing but hellos to a peer no authenticated
// datagram has come from (from the address it announced).
func (e *engine) emit(to, size int, m *msg) {
	if e.err != nil || !e.peers[to].live() || !e.proven[to] && m.Type != msgHello {
		return
	}
	if e.nOut == len(e.outs) || e.bytes+size > batchBytes {
		e.flush()
	}
	o := &e.outs[e.nOut]
	b := o.buf[:size]
	m.put(b[wire.HeaderLen:])
	if _, err := e.peers[to].Seal.SealPacket(b, dataKind, 0); err != nil {
		e.err = err
		return
	}
	o.to, o.n, o.hold = to, size, hold{}
	if m.Type == msgBlock || m.Type == msgForward {
		o.hold = e.curHold
	}
	e.nOut++
	e.bytes += size
	e.pktsOut++
	e.bytesOut += int64(size)
	if m.Type != msgBlock {
		// What a node sends itself crosses its loopback device, whole.
		pkts := 1
		if to != e.self {
			pkts = traffic.PacketsPerDatagram(size, e.mtu)
		}
		e.res.OtherPackets += int64(pkts)
	}
}

// flush sends the queued datagrams.
func (e *engine) flush() {
	if e.nOut > 0 && e.err == nil {
		if e.splits != nil {
			e.stampHeld(e.outs[:e.nOut])
		}
		e.err = e.send(e.outs[:e.nOut])
	}
	e.nOut, e.bytes = 0, 0
}

// workSpec is the spec of a node's workload engine: the run's, without
// the pings, which have an engine of their own.
func workSpec(s Spec) Spec {
	s.NoPing = true
	return s
}

// pingSpec is the spec of a node's ping engine: the run's duration,
// timeout and ping interval, and no workload (no request slots; one block,
// never asked for).
func pingSpec(s Spec) Spec {
	s.Outstanding, s.RatePerSec = 0, 0
	s.Blocks, s.Skew, s.CurrentShare = 1, 0, 0
	s.Block, s.Request = PingLarge, HeaderLen
	s.NoSplit = true // the ping table is its own figure
	return s
}
