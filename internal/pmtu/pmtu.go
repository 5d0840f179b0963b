// Package pmtu proves the path MTU of one direction of a path: it sends
// probes with DF set that bypass the kernel's cached path MTU
// (IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE), binary-searches the largest
// packet that arrives, to the byte, reads ICMP "fragmentation needed" /
// "packet too big" from the socket error queue (IP_RECVERR), retries each
// failed size so random loss is not mistaken for a size limit, and
// classifies the result (Verdict).
//
// Two transports exist: UDP probes answered by an interlink agent (Conn,
// tagged for an authenticated session, each answered by a 48-byte ack), and
// ICMP echo (ICMPProber) for hosts without an agent. The search (Run) is
// independent of the transport.
//
// Sizes are IP packet sizes ("on the wire", what an MTU limits) unless a
// name says payload: payload = packet - 28 bytes for IPv4 (20 IP + 8 UDP or
// ICMP), - 48 for IPv6, as ping's -s counts.
package pmtu

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/latency"
)

// Verdict classifies one direction of a path.
type Verdict string

// Verdicts.
const (
	// OK: the largest packet the sending interface allows arrives.
	OK Verdict = "ok"
	// LocalLimit: the sending interface's own MTU is the limit, and it is
	// smaller than the peer's interface MTU or the expected MTU.
	LocalLimit Verdict = "local-limit"
	// ICMP: a hop answered "fragmentation needed" / "packet too big" with
	// its next-hop MTU (ICMPFrom, ICMPMTU).
	ICMP Verdict = "icmp"
	// Blackhole: packets above PathMTU vanish without any ICMP error (an
	// L2 device such as a switch port with a smaller MTU, or a receiving
	// interface with a smaller MTU).
	Blackhole Verdict = "blackhole"
	// Unreachable: not even the smallest probe was answered.
	Unreachable Verdict = "unreachable"
)

// Direction names.
const (
	Forward = "forward" // from this host (the client) to the peer
	Reverse = "reverse" // from the peer back to this host
)

// Result is the outcome for one direction. Sizes are IP packet bytes unless
// named Payload.
type Result struct {
	Direction      string        `json:"direction"`
	From           string        `json:"from"`
	To             string        `json:"to"`
	Family         string        `json:"family"` // ipv4, ipv6
	Method         string        `json:"method"` // udp (agent), icmp (echo)
	Verdict        Verdict       `json:"verdict"`
	PathMTU        int           `json:"path_mtu,omitempty"`        // largest packet that arrived; 0 (absent) if none
	PayloadPassed  int           `json:"payload_passed,omitempty"`  // its payload (PathMTU - header bytes)
	SmallestFailed int           `json:"smallest_failed,omitempty"` // smallest packet that did not arrive; 0 (absent) if none failed
	PayloadFailed  int           `json:"payload_failed,omitempty"`
	HeaderBytes    int           `json:"header_bytes"` // IP + UDP/ICMP header bytes per probe
	LocalMTU       int           `json:"local_mtu"`    // MTU of the sending interface
	LocalIface     string        `json:"local_iface,omitempty"`
	PeerMTU        int           `json:"peer_mtu,omitempty"` // MTU of the receiving interface, when the receiver says
	ICMPFrom       string        `json:"icmp_from,omitempty"`
	ICMPMTU        int           `json:"icmp_mtu,omitempty"`
	Probes         int           `json:"probes"`
	Lost           int           `json:"lost"` // probes lost at sizes that did pass on retry (random loss)
	Elapsed        time.Duration `json:"elapsed_ns"`
	// Waited is the part of Elapsed spent only waiting out probe timeouts
	// (for answers that did not come): the search's cost that loads
	// nobody. Absent when none.
	Waited time.Duration `json:"waited_ns,omitempty"`
	// PeerSilent is set when the boundary found rests on a re-check that
	// heard neither it nor the largest size that had passed before: the
	// peer fell silent during the search (an agent descheduled for
	// seconds), so the limit is unproven.
	PeerSilent bool `json:"peer_silent,omitempty"`
	// RTT summarises the round trips of the probes that were answered
	// (every size that passed, each timed from its send to its ack or echo
	// reply, so node to node when an agent probes another agent). Absent
	// (zero) when no probe came back.
	RTT    latency.Summary `json:"rtt,omitzero"`
	Detail string          `json:"detail"`
}

// Line renders the sizes as the articles write them: "8972 bytes of
// payload, 9000 on the wire, pass; 8973 do not".
func (r Result) Line() string {
	if r.PathMTU == 0 {
		return "no probe arrived"
	}
	s := fmt.Sprintf("%d bytes of payload, %d on the wire, pass", r.PayloadPassed, r.PathMTU)
	if r.SmallestFailed > 0 {
		s += fmt.Sprintf("; %d do not", r.PayloadFailed)
	} else if r.PathMTU < r.LocalMTU {
		s += "; nothing larger was tried"
	} else {
		s += fmt.Sprintf("; nothing larger fits the %s interface", r.ifaceName())
	}
	return s
}

func (r Result) ifaceName() string {
	if r.LocalIface != "" {
		return r.LocalIface
	}
	return "sending"
}

// explain fills Detail from the verdict.
func (r *Result) explain() {
	switch r.Verdict {
	case OK:
		r.Detail = fmt.Sprintf("the full MTU %d of %s arrives", r.LocalMTU, r.ifaceName())
	case LocalLimit:
		r.Detail = fmt.Sprintf("limited by the sending interface %s (MTU %d)", r.ifaceName(), r.LocalMTU)
		if r.PeerMTU > r.LocalMTU {
			r.Detail += fmt.Sprintf("; the peer's interface has MTU %d", r.PeerMTU)
		}
	case ICMP:
		msg := "fragmentation needed"
		if r.Family == "ipv6" {
			msg = "packet too big"
		}
		r.Detail = fmt.Sprintf("%s reported %q with next-hop MTU %d", r.ICMPFrom, msg, r.ICMPMTU)
	case Blackhole:
		r.Detail = fmt.Sprintf("packets above %d bytes vanish without an ICMP error (a switch port or receiving interface with a smaller MTU)", r.PathMTU)
		if r.PeerMTU > 0 && r.PeerMTU == r.PathMTU && r.PeerMTU < r.LocalMTU {
			r.Detail = fmt.Sprintf("packets above %d bytes vanish without an ICMP error: the receiving interface has MTU %d, this side %d", r.PathMTU, r.PeerMTU, r.LocalMTU)
		}
	case Unreachable:
		if r.Detail == "" {
			r.Detail = "no probe was answered, not even the smallest"
		}
	}
	if r.PeerSilent {
		r.Detail += fmt.Sprintf("; unproven: the last re-check heard neither %d nor %d, which had passed (the peer fell silent)", r.SmallestFailed, r.PathMTU)
	}
	r.Detail += r.lostText()
}

// lostText is the end of Detail that counts the probes lost ("" when none).
func (r Result) lostText() string {
	if r.Lost == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of %d probes lost at sizes that passed on retry", r.Lost, r.Probes)
}

// Again is the result of a direction searched again because its first
// search heard nothing at all, or rested its limit on a re-check that heard
// nothing (PeerSilent), while the other direction, between the same two
// sockets, passed: a peer that stalled, not the path. It is again's
// result, with the first search's probes added (those unanswered counted
// as lost) and its time.
func Again(first, again Result) Result {
	detail := strings.TrimSuffix(again.Detail, again.lostText())
	again.Probes += first.Probes
	again.Lost += first.Probes - int(first.RTT.Count)
	again.Elapsed += first.Elapsed
	again.Waited += first.Waited
	why := "the first search heard nothing"
	if first.PathMTU > 0 {
		why = "the first search's last re-check heard nothing"
	}
	again.Detail = detail + again.lostText() + "; searched twice: " + why
	return again
}

// Hooks connect a Conn to the session that owns it (agent side): rate
// limits and counters. Nil fields do nothing.
type Hooks struct {
	Wait  func(ctx context.Context, n int) error // before sending a probe
	Allow func(n int) bool                       // before sending an ack; false drops it
	In    func(n int)                            // an authenticated datagram arrived
	Out   func(n int)                            // a datagram was sent
	Drop  func()                                 // an unauthenticated datagram was dropped
	Short func()                                 // a datagram was read short (truncated)
}
