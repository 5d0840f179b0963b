// Package wire is the interlink agent protocol: versioned control messages
// with length-bounded framing, the HMAC challenge-response handshake on a
// shared token, and the per-packet tag that authenticates data traffic (UDP
// probes, and any other session-scoped datagram or stream) for one session.
//
// # Control channel
//
// A control session is a TCP connection carrying frames:
//
//	type   uint8
//	length uint32, big endian, at most MaxPayload
//	payload [length]byte (a JSON object; see the message types)
//
// The decoder never allocates more than MaxPayload bytes for a frame and
// rejects unknown types, so garbage sent to the control port costs the
// agent one small read and a closed connection.
//
// # Handshake (both sides prove the token, which never crosses the wire)
//
//	client -> Hello{version, client nonce, tags}
//	agent  -> Challenge{agent nonce, agent proof}   or Refuse{reason}
//	client -> Auth{client proof}                    or Refuse{reason}
//	agent  -> Welcome{session id, limits, tag}      or Refuse{reason}
//
// agent proof  = HMAC-SHA256(token, "interlink/1 agent"  | cn | sn)
// client proof = HMAC-SHA256(token, "interlink/1 client" | cn | sn)
//
// The labels differ so that neither side can reflect the other's proof.
// After Welcome the client sends Request frames and the agent answers each
// with one Response frame with the same id (see Request for the typed
// extension point).
//
// # Data packets
//
// Every datagram (and the first bytes of every data stream) of a session
// starts with a 48-byte Header whose 16-byte tag is a truncated
// HMAC-SHA256 or, when both ends have it (Hello.Tags, Welcome.Tag), an
// AES-256-GMAC under a direction key derived from the token and both
// nonces (SessionKeys; tag.go). The tag covers the header, which includes the session id,
// a per-direction sequence number and the total datagram length; a Window
// rejects replays. See Sealer and Opener.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version this build speaks. A peer with another
// version is refused with a reason naming both.
const Version = 1

// DefaultPort is the agent's default TCP control port.
const DefaultPort = 7471

// MaxPayload bounds the payload of one control frame. Control messages are
// small JSON objects; nothing legitimate comes near this.
const MaxPayload = 64 << 10

// frameHeaderLen is type (1) + length (4).
const frameHeaderLen = 5

// Type identifies a control frame.
type Type uint8

// Control frame types. Values are part of the protocol: never renumber.
const (
	THello     Type = 1
	TChallenge Type = 2
	TAuth      Type = 3
	TWelcome   Type = 4
	TRefuse    Type = 5
	TRequest   Type = 6
	TResponse  Type = 7
	TBye       Type = 8
	tMax            = TBye
)

func (t Type) String() string {
	switch t {
	case THello:
		return "hello"
	case TChallenge:
		return "challenge"
	case TAuth:
		return "auth"
	case TWelcome:
		return "welcome"
	case TRefuse:
		return "refuse"
	case TRequest:
		return "request"
	case TResponse:
		return "response"
	case TBye:
		return "bye"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Errors returned by the decoder. Callers test with errors.Is.
var (
	ErrFrameTooLarge = errors.New("frame too large")
	ErrBadType       = errors.New("unknown frame type")
	ErrBadMessage    = errors.New("malformed message")
)

// Frame is one control frame.
type Frame struct {
	Type    Type
	Payload []byte
}

// WriteFrame writes one frame. It refuses payloads over MaxPayload so a
// sender cannot produce what the receiver must reject.
func WriteFrame(w io.Writer, t Type, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("write %s frame: %d bytes: %w", t, len(payload), ErrFrameTooLarge)
	}
	buf := make([]byte, frameHeaderLen+len(payload))
	buf[0] = byte(t)
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(payload)))
	copy(buf[frameHeaderLen:], payload)
	_, err := w.Write(buf)
	return err
}

// ReadFrame reads one frame, bounding its length by MaxPayload before
// allocating.
func ReadFrame(r io.Reader) (Frame, error) {
	var hdr [frameHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, err
	}
	t := Type(hdr[0])
	if t == 0 || t > tMax {
		return Frame{}, fmt.Errorf("read frame: %d: %w", hdr[0], ErrBadType)
	}
	n := binary.BigEndian.Uint32(hdr[1:5])
	if n > MaxPayload {
		return Frame{}, fmt.Errorf("read %s frame: %d bytes: %w", t, n, ErrFrameTooLarge)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, fmt.Errorf("read %s frame: %w", t, err)
	}
	return Frame{Type: t, Payload: p}, nil
}
