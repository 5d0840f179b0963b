package traffic

import (
	"encoding/binary"
	"errors"
)

// HeaderLen is the size of the header at the start of every datagram the
// UDP and blocks engines send. Sizes given by the user (--len, --request,
// --block) include it, as iperf3's --len includes its own header, so an
// 8 KiB block is an 8192-byte UDP payload on the wire.
const HeaderLen = 40

// magic marks interlink traffic datagrams ("ILtr").
const magic = 0x494c7472

// Kind is the type of a datagram.
type Kind uint8

// Datagram kinds.
const (
	KindData     Kind = 1 // udp stream payload
	KindEnd      Kind = 2 // udp stream end marker; Seq holds the number sent
	KindRequest  Kind = 3 // blocks: a request
	KindResponse Kind = 4 // blocks: one chunk of a block
	// KindFeedback goes from a flow-controlled UDP receiver to its sender
	// (flow.go): Seq holds the receiver's high mark (the next number it
	// expects), Size the window it grants in datagrams beyond it, Stamp
	// the receiver's clock.
	KindFeedback Kind = 5
)

// Header is the decoded datagram header. Layout, big-endian:
//
//	0  magic  uint32
//	4  kind   uint8
//	5  flags  uint8   FlagHeld (responses), FlagSampling (requests), or zero
//	6  chunk  uint16  index of this chunk within its block
//	8  seq    uint64  datagram or request sequence number
//	16 stamp  int64   sender's clock in ns (a request's, echoed in its response)
//	24 size   uint32  block size (requests and responses)
//	28 chunks uint16  chunks in the block
//	30 (reserved, zero)
//	32 held   int64   a response's: ns the responder held its request
//	                  (FlagHeld set), zero otherwise
//
// An agent from before FlagHeld sends zero there (the field was a reserved
// tag), so a response without the flag is one whose hold is not known.
type Header struct {
	Kind   Kind
	Flags  uint8
	Chunk  uint16
	Seq    uint64
	Stamp  int64
	Size   uint32
	Chunks uint16
	// Held is, with FlagHeld, the time from the kernel's receive stamp of
	// the request at the responder to the response's send (split.go).
	Held int64
}

// FlagHeld marks a response whose Held is set: the responder had a
// kernel receive stamp for the request.
const FlagHeld uint8 = 1

// FlagSampling marks a request sent while its requester reads with
// stamps (Spec.SplitSync): the responder reads the next requests with
// stamps too, so both ends stamp the same blocks (split.go).
const FlagSampling uint8 = 2

// heldOffset is where Held sits in the header.
const heldOffset = 32

var errHeader = errors.New("not an interlink traffic datagram")

// Put writes h into b, which must hold HeaderLen bytes.
func (h *Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	binary.BigEndian.PutUint32(b[0:], magic)
	b[4] = byte(h.Kind)
	b[5] = h.Flags
	binary.BigEndian.PutUint16(b[6:], h.Chunk)
	binary.BigEndian.PutUint64(b[8:], h.Seq)
	binary.BigEndian.PutUint64(b[16:], uint64(h.Stamp))
	binary.BigEndian.PutUint32(b[24:], h.Size)
	binary.BigEndian.PutUint16(b[28:], h.Chunks)
	b[30], b[31] = 0, 0
	binary.BigEndian.PutUint64(b[heldOffset:], uint64(h.Held))
}

// Parse decodes the header at the start of b.
func (h *Header) Parse(b []byte) error {
	if len(b) < HeaderLen || binary.BigEndian.Uint32(b) != magic {
		return errHeader
	}
	h.Kind = Kind(b[4])
	h.Chunk = binary.BigEndian.Uint16(b[6:])
	h.Seq = binary.BigEndian.Uint64(b[8:])
	h.Stamp = int64(binary.BigEndian.Uint64(b[16:]))
	h.Size = binary.BigEndian.Uint32(b[24:])
	h.Chunks = binary.BigEndian.Uint16(b[28:])
	h.Flags = b[5]
	h.Held = int64(binary.BigEndian.Uint64(b[heldOffset:]))
	if h.Kind < KindData || h.Kind > KindFeedback {
		return errHeader
	}
	return nil
}

// chunking splits a block of size bytes into UDP datagrams: one when it
// fits (an 8 KiB block is one datagram, fragmented by IP below MTU 8220),
// otherwise n datagrams of nearly equal size whose sizes add up to the
// block, each at most MaxDatagram. A block above 64 KiB cannot be one UDP
// datagram at all; Oracle's own UDP IPC splits such messages too.
func chunking(size, overhead int) (n int, sizes []int) {
	_ = overhead // every chunk is a whole datagram: its headers are inside size
	n = (size + MaxDatagram - 1) / MaxDatagram
	if n < 1 {
		n = 1
	}
	sizes = make([]int, n)
	for i := range sizes {
		sizes[i] = size / n
		if i < size%n {
			sizes[i]++
		}
	}
	return n, sizes
}
