package gc

import (
	"encoding/binary"
	"errors"

	"github.com/interlink/interlink/internal/wire"
)

// dataKind tags gc datagrams in a session (wire kinds 16-127 are free for
// test kinds; bench uses 16).
const dataKind wire.Kind = 32

// msgType is the type of a gc datagram.
type msgType uint8

// The datagrams of a run. Every one starts with the session's 48-byte
// tagged header and the 32-byte gc header (msg); sizes include both.
const (
	msgHello   msgType = 1 // setup: proves the sender's data address (flagHeard, flagDone)
	msgRequest msgType = 2 // requester -> master, Spec.Request bytes
	msgForward msgType = 3 // master (or a requester that is the master) -> holder, Spec.Request bytes
	msgBlock   msgType = 4 // one chunk of a block, to the requester
	msgLostQ   msgType = 5 // requester -> master: where did request id go? HeaderLen bytes
	msgLostA   msgType = 6 // master -> requester: the server it routed id to (flagSeen), HeaderLen bytes
	msgPing    msgType = 7 // PingSmall or PingLarge bytes
	msgPong    msgType = 8 // the ping echoed at its own size
	msgMax             = msgPong
)

// Flags.
const (
	flagCurrent uint8 = 1 << 0 // current mode: ownership moves to the requester
	flagHeard   uint8 = 1 << 1 // hello: the sender has heard from the receiver
	flagDone    uint8 = 1 << 3 // hello: ... and knows the receiver heard it: it needs no answer
	flagSeen    uint8 = 1 << 2 // lost answer: the master saw the request and routed it
	// flagHeld: a forward or block whose stamp holds how long the nodes
	// that handled its request held it (split.go): their wake-ups in the
	// high 32 bits, their work in the low, ns each. An agent from before
	// the split sends neither the flag nor the times.
	flagHeld uint8 = 1 << 4
)

// msgLen is the gc header's length. Layout, big-endian:
//
//	0  type      uint8
//	1  flags     uint8
//	2  hops      uint8   2 or 3 (blocks and forwards)
//	3  requester uint8   node index of the requester
//	4  server    uint8   node index that ships (blocks) or was routed to (lost answers)
//	5  (zero)
//	6  chunk     uint16  index of this datagram in its block
//	8  chunks    uint16  datagrams in the block
//	10 (zero)
//	12 block     uint32  block number
//	16 id        uint64  the requester's request (slot and generation) or ping number
//	24 stamp     int64   the sender's clock, ns (pings); held times (flagHeld)
const msgLen = 32

type msg struct {
	Type      msgType
	Flags     uint8
	Hops      uint8
	Requester uint8
	Server    uint8
	Chunk     uint16
	Chunks    uint16
	Block     uint32
	ID        uint64
	Stamp     int64
}

var errMsg = errors.New("not a gc message")

// isPing tells a ping or its echo by its type byte, before anything is
// verified (the loop handles them first).
func isPing(pkt []byte) bool {
	return len(pkt) > wire.HeaderLen && (msgType(pkt[wire.HeaderLen]) == msgPing || msgType(pkt[wire.HeaderLen]) == msgPong)
}

// put writes m into b, which holds at least msgLen bytes.
func (m *msg) put(b []byte) {
	_ = b[msgLen-1]
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(m.Type), m.Flags, m.Hops, m.Requester, m.Server, 0
	binary.BigEndian.PutUint16(b[6:], m.Chunk)
	binary.BigEndian.PutUint16(b[8:], m.Chunks)
	b[10], b[11] = 0, 0
	binary.BigEndian.PutUint32(b[12:], m.Block)
	binary.BigEndian.PutUint64(b[16:], m.ID)
	binary.BigEndian.PutUint64(b[24:], uint64(m.Stamp))
}

// parse decodes the gc header at the start of b and checks what needs no
// context: a known type, a chunk inside its block.
func (m *msg) parse(b []byte) error {
	if len(b) < msgLen || b[0] == 0 || msgType(b[0]) > msgMax {
		return errMsg
	}
	m.Type, m.Flags, m.Hops, m.Requester, m.Server = msgType(b[0]), b[1], b[2], b[3], b[4]
	m.Chunk = binary.BigEndian.Uint16(b[6:])
	m.Chunks = binary.BigEndian.Uint16(b[8:])
	m.Block = binary.BigEndian.Uint32(b[12:])
	m.ID = binary.BigEndian.Uint64(b[16:])
	m.Stamp = int64(binary.BigEndian.Uint64(b[24:]))
	if m.Type == msgBlock && (m.Chunks == 0 || m.Chunk >= m.Chunks) {
		return errMsg
	}
	return nil
}

// slotBits is how many low bits of a request id name the requester's slot
// (MaxOutstanding slots); the rest is the slot's generation, so a late
// block or answer for a reused slot is recognised.
const slotBits = 10

func slotOf(id uint64) int   { return int(id & (1<<slotBits - 1)) }
func genOf(id uint64) uint64 { return id >> slotBits }
