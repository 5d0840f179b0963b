package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// NonceLen is the length of the handshake nonces; ProofLen of the proofs.
const (
	NonceLen = 32
	ProofLen = 32
	// MaxKindLen bounds a request kind ("pmtu.probe", "bench.stream").
	MaxKindLen = 64
	// MaxReasonLen bounds refusal and error texts shown to users.
	MaxReasonLen = 512
)

// Magic is the first field of Hello, so a stray client of another protocol
// is refused with a clear reason rather than a JSON error.
const Magic = "interlink"

// Hello opens a control session (client to agent).
type Hello struct {
	Magic    string `json:"magic"`
	Version  int    `json:"version"`
	Nonce    []byte `json:"nonce"`
	Software string `json:"software,omitempty"` // e.g. "interlink v0.1.0", for the agent's log
	// Tags are the data tag algorithms the client has beyond TagHMAC,
	// in its order of preference (tag.go); an older client sends none.
	Tags []string `json:"tags,omitempty"`
}

// Challenge is the agent's answer to Hello: its nonce and its proof that it
// holds the token.
type Challenge struct {
	Version int    `json:"version"`
	Nonce   []byte `json:"nonce"`
	Proof   []byte `json:"proof"`
}

// Auth carries the client's proof.
type Auth struct {
	Proof []byte `json:"proof"`
}

// Limits are what an agent grants one session. Zero means "no limit" only
// for fields documented so; the agent always sends all of them.
type Limits struct {
	MaxDuration       time.Duration `json:"max_duration_ns"`       // session lifetime; requests past it are refused
	MaxRateBitsPerSec float64       `json:"max_rate_bits_per_sec"` // data sent by the agent for this session
	MaxSessions       int           `json:"max_sessions"`          // concurrent sessions on this agent
	MaxEndpoints      int           `json:"max_endpoints"`         // data endpoints one session may open
}

// Welcome accepts the session.
type Welcome struct {
	Session uint64 `json:"session"`
	Limits  Limits `json:"limits"`
	Agent   string `json:"agent,omitempty"` // agent software version
	// Tag is the data tag algorithm of the session, one the client
	// offered; empty is TagHMAC (an older agent never sets it).
	Tag string `json:"tag,omitempty"`
}

// Refuse ends a handshake (or a session) with a reason meant for a person.
type Refuse struct {
	Reason string `json:"reason"`
}

// Request is the extension point of the control session: a typed request
// ("pmtu.open", "pmtu.probe", "bench.stream", ...) whose body is decoded by
// the handler registered for Kind. ID matches the Response.
type Request struct {
	ID   uint32          `json:"id"`
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"body,omitempty"`
}

// Response answers the Request with the same ID: Error is set (for a
// person) when the request failed, otherwise Body holds the result.
type Response struct {
	ID    uint32          `json:"id"`
	Error string          `json:"error,omitempty"`
	Body  json.RawMessage `json:"body,omitempty"`
}

// Bye ends a session cleanly.
type Bye struct{}

// typeOf maps a message to its frame type.
func typeOf(m any) (Type, error) {
	switch m.(type) {
	case *Hello:
		return THello, nil
	case *Challenge:
		return TChallenge, nil
	case *Auth:
		return TAuth, nil
	case *Welcome:
		return TWelcome, nil
	case *Refuse:
		return TRefuse, nil
	case *Request:
		return TRequest, nil
	case *Response:
		return TResponse, nil
	case *Bye:
		return TBye, nil
	}
	return 0, fmt.Errorf("wire: %T is not a message", m)
}

// Write encodes one message (a pointer to a message type) as a frame.
func Write(w io.Writer, m any) error {
	t, err := typeOf(m)
	if err != nil {
		return err
	}
	p, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", t, err)
	}
	return WriteFrame(w, t, p)
}

// Read reads and decodes one message, returning a pointer to one of the
// message types. Every field is validated (lengths, ranges) so the caller
// can trust what it gets.
func Read(r io.Reader) (any, error) {
	f, err := ReadFrame(r)
	if err != nil {
		return nil, err
	}
	return Decode(f)
}

// Decode decodes and validates a frame's payload.
func Decode(f Frame) (any, error) {
	var m any
	switch f.Type {
	case THello:
		m = new(Hello)
	case TChallenge:
		m = new(Challenge)
	case TAuth:
		m = new(Auth)
	case TWelcome:
		m = new(Welcome)
	case TRefuse:
		m = new(Refuse)
	case TRequest:
		m = new(Request)
	case TResponse:
		m = new(Response)
	case TBye:
		m = new(Bye)
	default:
		return nil, fmt.Errorf("decode: %d: %w", f.Type, ErrBadType)
	}
	dec := json.NewDecoder(bytes.NewReader(f.Payload))
	if err := dec.Decode(m); err != nil {
		return nil, fmt.Errorf("decode %s: %v: %w", f.Type, err, ErrBadMessage)
	}
	if err := validate(m); err != nil {
		return nil, fmt.Errorf("decode %s: %v: %w", f.Type, err, ErrBadMessage)
	}
	return m, nil
}

func validate(m any) error {
	switch v := m.(type) {
	case *Hello:
		if v.Magic != Magic {
			return fmt.Errorf("not an interlink client (magic %.20q)", v.Magic)
		}
		if len(v.Nonce) != NonceLen {
			return fmt.Errorf("nonce is %d bytes, want %d", len(v.Nonce), NonceLen)
		}
		if len(v.Software) > MaxReasonLen {
			return fmt.Errorf("software name too long")
		}
	case *Challenge:
		if len(v.Nonce) != NonceLen || len(v.Proof) != ProofLen {
			return fmt.Errorf("nonce or proof has the wrong length")
		}
	case *Auth:
		if len(v.Proof) != ProofLen {
			return fmt.Errorf("proof is %d bytes, want %d", len(v.Proof), ProofLen)
		}
	case *Welcome:
		if v.Session == 0 {
			return fmt.Errorf("session id 0")
		}
		if v.Limits.MaxDuration < 0 || v.Limits.MaxRateBitsPerSec < 0 || v.Limits.MaxSessions < 0 || v.Limits.MaxEndpoints < 0 {
			return fmt.Errorf("negative limit")
		}
	case *Refuse:
		if len(v.Reason) > MaxReasonLen {
			return fmt.Errorf("reason too long")
		}
	case *Request:
		if v.Kind == "" || len(v.Kind) > MaxKindLen {
			return fmt.Errorf("request kind %.20q: empty or too long", v.Kind)
		}
	case *Response:
		if len(v.Error) > MaxReasonLen {
			return fmt.Errorf("error text too long")
		}
	}
	return nil
}
