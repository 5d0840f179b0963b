package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// HeaderLen is the length of the data header that starts every datagram
// (and every data stream) of a session.
//
//	0:2   magic "IL"
//	2     version
//	3     kind
//	4:12  session id
//	12:20 sequence number (per sender, from 1)
//	20:28 ref (an ack's probe sequence; free for other kinds)
//	28:32 length: the datagram's total length including this header
//	32:48 tag of bytes 0:32 under the direction key: the session's tag
//	      algorithm (tag.go), TagHMAC (HMAC-SHA256, first 16 bytes) or
//	      TagGMAC (AES-256-GMAC)
const HeaderLen = 48

// TagLen is the length of the tag.
const TagLen = 16

// Kind is the type of a data packet.
type Kind uint8

// Data packet kinds. Values 1-15 belong to pmtu; 16-127 are free for other
// test kinds (bench), which define their own constants.
const (
	KindProbe Kind = 1 // a probe: the receiver answers with an Ack no larger than the probe
	KindAck   Kind = 2 // acknowledges the probe whose sequence number is in Ref
	KindHello Kind = 3 // proves the sender's address for the session's data endpoint
)

// Errors from Opener.Open; garbage is dropped silently by callers, these
// only feed counters and tests.
var (
	ErrShort      = errors.New("data packet shorter than its header")
	ErrNotData    = errors.New("not an interlink data packet")
	ErrBadTag     = errors.New("data packet tag does not verify")
	ErrReplay     = errors.New("data packet replayed or too old")
	ErrBadSession = errors.New("data packet for another session")
	ErrBadLength  = errors.New("data packet length does not match")
)

// Header is a decoded data header.
type Header struct {
	Kind    Kind
	Session uint64
	Seq     uint64
	Ref     uint64
	Length  uint32
}

// Sealer writes tagged data headers for one direction of one session. It is
// safe for concurrent use; sequence numbers are unique per Sealer.
type Sealer struct {
	mu      sync.Mutex
	tag     tagger
	session uint64
	seq     uint64
}

// NewSealer returns a Sealer for key (one of Keys' directions) and session
// that tags with TagHMAC.
func NewSealer(key []byte, session uint64) *Sealer {
	s, _ := NewSealerTag(TagHMAC, key, session)
	return s
}

// NewSealerTag is NewSealer with the tag algorithm alg (TagHMAC, TagGMAC).
func NewSealerTag(alg string, key []byte, session uint64) (*Sealer, error) {
	t, err := newTagger(alg, key)
	if err != nil {
		return nil, err
	}
	return &Sealer{tag: t, session: session}, nil
}

// Seal writes a header for kind and ref into hdr[:HeaderLen], recording
// length as the total length of what the header starts, and returns the
// sequence number used.
func (s *Sealer) Seal(hdr []byte, kind Kind, ref uint64, length int) (uint64, error) {
	if len(hdr) < HeaderLen {
		return 0, ErrShort
	}
	if length < HeaderLen || int64(length) > 0xffffffff {
		return 0, fmt.Errorf("seal: length %d: %w", length, ErrBadLength)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	hdr[0], hdr[1], hdr[2], hdr[3] = 'I', 'L', Version, byte(kind)
	binary.BigEndian.PutUint64(hdr[4:12], s.session)
	binary.BigEndian.PutUint64(hdr[12:20], s.seq)
	binary.BigEndian.PutUint64(hdr[20:28], ref)
	binary.BigEndian.PutUint32(hdr[28:32], uint32(length))
	s.tag.put(hdr, s.seq)
	return s.seq, nil
}

// SealPacket seals a whole datagram: the header covers len(pkt).
func (s *Sealer) SealPacket(pkt []byte, kind Kind, ref uint64) (uint64, error) {
	return s.Seal(pkt, kind, ref, len(pkt))
}

// Opener verifies tagged data headers for one direction of one session and
// rejects replays with a sliding Window. Safe for concurrent use.
type Opener struct {
	mu      sync.Mutex
	tag     tagger
	session uint64
	win     Window
}

// NewOpener returns an Opener for key and session that checks TagHMAC.
func NewOpener(key []byte, session uint64) *Opener {
	o, _ := NewOpenerTag(TagHMAC, key, session)
	return o
}

// NewOpenerTag is NewOpener with the tag algorithm alg (TagHMAC, TagGMAC).
func NewOpenerTag(alg string, key []byte, session uint64) (*Opener, error) {
	t, err := newTagger(alg, key)
	if err != nil {
		return nil, err
	}
	return &Opener{tag: t, session: session}, nil
}

// ParseHeader decodes a header without verifying it (for dispatching by
// session id before the key is known). It checks magic and version only.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, ErrShort
	}
	if b[0] != 'I' || b[1] != 'L' || b[2] != Version {
		return Header{}, ErrNotData
	}
	return Header{
		Kind:    Kind(b[3]),
		Session: binary.BigEndian.Uint64(b[4:12]),
		Seq:     binary.BigEndian.Uint64(b[12:20]),
		Ref:     binary.BigEndian.Uint64(b[20:28]),
		Length:  binary.BigEndian.Uint32(b[28:32]),
	}, nil
}

// OpenHeader verifies the header at the start of b (tag, session, replay)
// and returns it. The caller checks Length against what it reads (streams).
func (o *Opener) OpenHeader(b []byte) (Header, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if h.Session != o.session {
		return h, ErrBadSession
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.tag.ok(b, h.Seq) {
		return h, ErrBadTag
	}
	// Only a verified sequence number may move the window.
	if !o.win.Check(h.Seq) {
		return h, ErrReplay
	}
	return h, nil
}

// Open verifies a whole datagram: header as OpenHeader, and its recorded
// length equal to len(pkt) (so a truncated or padded copy is rejected).
func (o *Opener) Open(pkt []byte) (Header, error) {
	if len(pkt) >= HeaderLen && binary.BigEndian.Uint32(pkt[28:32]) != uint32(len(pkt)) {
		return Header{}, ErrBadLength
	}
	return o.OpenHeader(pkt)
}

// WindowSize is how far behind the newest sequence number a packet may
// arrive and still be accepted once.
const WindowSize = 64

// Window is an anti-replay sliding window (as in IPsec, RFC 4303 3.4.3):
// each sequence number is accepted at most once, and numbers older than
// WindowSize behind the newest are rejected. The zero value is ready.
type Window struct {
	top  uint64 // newest accepted sequence number
	bits uint64 // bit i set: top-i was accepted
}

// Check reports whether seq is new, and records it if so. Seq 0 is never
// valid (senders start at 1).
func (w *Window) Check(seq uint64) bool {
	switch {
	case seq == 0:
		return false
	case seq > w.top:
		shift := seq - w.top
		if shift >= WindowSize {
			w.bits = 1
		} else {
			w.bits = w.bits<<shift | 1
		}
		w.top = seq
		return true
	case w.top-seq >= WindowSize:
		return false
	default:
		bit := uint64(1) << (w.top - seq)
		if w.bits&bit != 0 {
			return false
		}
		w.bits |= bit
		return true
	}
}
