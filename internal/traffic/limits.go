package traffic

// Limit names a limit that bounded a result.
type Limit struct {
	// Limit is a stable name: LimitAgentRate, LimitAgentDuration,
	// LimitDeadline.
	Limit  string `json:"limit"`
	Detail string `json:"detail"` // for a person: the limit, its value, how much it held back
	// HeldNs is how long the limit held the end back (rate: time its sends
	// waited), when that is known.
	HeldNs int64 `json:"held_ns,omitempty"`
}

// The limits a result can be bounded by.
const (
	LimitAgentRate     = "agent-rate"     // the agent's per-session send limit (--max-rate)
	LimitAgentDuration = "agent-duration" // the agent's session length (--max-duration)
	LimitDeadline      = "deadline"       // a stalled end was cut at --time plus a grace
)

// addLimit appends l unless a limit of the same name is there already.
func addLimit(ls []Limit, l Limit) []Limit {
	for _, x := range ls {
		if x.Limit == l.Limit {
			return ls
		}
	}
	return append(ls, l)
}

// largestPacket is the largest IP packet that is known to have arrived in
// a flow: for TCP from the receiver's segments, for UDP and blocks from the
// size of a delivered datagram (or, when IP fragments it, of its first
// fragment, which fills the MTU); 0 when nothing arrived.
func largestPacket(spec Spec, s *Summary, recv *Side) int {
	if s.Messages == 0 && s.Bytes == 0 {
		return 0
	}
	if spec.Mode == ModeTCP {
		n := 0
		for _, st := range recv.Streams {
			n = max(n, st.LargestPacket)
		}
		return n
	}
	payload := spec.Len
	if spec.Mode == ModeBlocks {
		payload = min(spec.Block, MaxDatagram) // a block's first datagram is its largest
	}
	pkt := payload + 28 // IPv4 and UDP headers
	if s.MTU > 0 && pkt > s.MTU {
		pkt = 20 + (s.MTU-20)/8*8 // the first fragment
	}
	return pkt
}
