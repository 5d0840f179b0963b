package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Labels keep the proofs and keys of the handshake apart, so one can never
// be replayed as another.
const (
	labelAgentProof  = "interlink/1 agent proof"
	labelClientProof = "interlink/1 client proof"
	labelC2A         = "interlink/1 key client-to-agent"
	labelA2C         = "interlink/1 key agent-to-client"
	labelSub         = "interlink/1 sub-channel "
)

// NewNonce returns NonceLen random bytes.
func NewNonce() ([]byte, error) {
	n := make([]byte, NonceLen)
	if _, err := rand.Read(n); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return n, nil
}

// RandomID is a random id that is never 0 (0 means none on the wire): a
// session's id, which every data packet's header carries, and the ids and
// seeds of gc runs. The agent and gc draw theirs here.
func RandomID() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

func mac(token []byte, label string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, token)
	h.Write([]byte(label))
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// AgentProof is what the agent sends in Challenge.
func AgentProof(token, clientNonce, agentNonce []byte) []byte {
	return mac(token, labelAgentProof, clientNonce, agentNonce)
}

// ClientProof is what the client sends in Auth.
func ClientProof(token, clientNonce, agentNonce []byte) []byte {
	return mac(token, labelClientProof, clientNonce, agentNonce)
}

// ProofOK compares a received proof with the expected one in constant time.
func ProofOK(want, got []byte) bool { return hmac.Equal(want, got) }

// Keys are the per-session data keys, one per direction, derived from the
// token and both nonces; they exist only in the two processes of a session.
type Keys struct {
	ClientToAgent []byte // tags what the client (session initiator) sends
	AgentToClient []byte // tags what the agent sends
}

// Sub derives a session's keys for another channel of its own, named by
// label (a second socket of the same pair, with a sequence and a replay
// window of its own): both directions, each keyed by the session's key of
// that direction, so that nothing sealed for one channel opens on another.
func (k Keys) Sub(label string) Keys {
	return Keys{
		ClientToAgent: mac(k.ClientToAgent, labelSub+label),
		AgentToClient: mac(k.AgentToClient, labelSub+label),
	}
}

// SessionKeys derives the data keys of a session.
func SessionKeys(token, clientNonce, agentNonce []byte) Keys {
	return Keys{
		ClientToAgent: mac(token, labelC2A, clientNonce, agentNonce),
		AgentToClient: mac(token, labelA2C, clientNonce, agentNonce),
	}
}
