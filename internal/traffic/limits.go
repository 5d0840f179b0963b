package traffic

import (
	"fmt"
	"time"

	"github.com/interlink/interlink/internal/units"
)

// Limit names a limit that bounded a result.
type Limit struct {
	// Limit is a stable name: LimitAgentRate, LimitAgentDuration,
	// LimitDeadline, LimitSenderLate.
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
	LimitSenderLate    = "sender-late"    // a paced sender fell behind its schedule (UDPStats.LateNs)
)

// lateShare is the share of a paced run its sender may fall behind its
// schedule (UDPStats.LateNs) before the result is limited by it: a sender
// a few ms late now and then on a busy host still measured the path at
// about the rate asked; one 5 % under it did not.
const lateShare = 0.05

// lateLimit is the sender-late limit of a paced sender that fell behind
// its schedule for late of a run of d, or nil when it kept up.
func lateLimit(late, d time.Duration) *Limit {
	if d <= 0 || float64(late) <= lateShare*float64(d) {
		return nil
	}
	return &Limit{Limit: LimitSenderLate, HeldNs: int64(late), Detail: fmt.Sprintf(
		"the paced sender fell %v behind its schedule (%s %% of the run) and skipped that much rather than send it in a burst: "+
			"its thread did not get a CPU in time (a busy host, or --cpu on a busy core) or its sends blocked, so it sent that much under --rate",
		late.Round(time.Millisecond), units.FormatPercent(100*float64(late)/float64(d), 0))}
}

// collectLimits adds the limits of every end of res's flows to res's own,
// and the deadline's for an end cut at it.
func collectLimits(res *Result) {
	for _, f := range res.Flows {
		for _, sd := range []*Side{f.Client, f.Server} {
			if sd == nil {
				continue
			}
			for _, l := range sd.LimitedBy {
				res.LimitedBy = addLimit(res.LimitedBy, l)
			}
			if sd.Cut {
				res.LimitedBy = addLimit(res.LimitedBy, Limit{Limit: LimitDeadline, Detail: fmt.Sprintf(
					"the %s was still running %v after --time %v and was cut there", sd.Role, RunGrace(res.Spec), res.Spec.Duration)})
			}
		}
	}
}

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
