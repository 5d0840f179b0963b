package traffic

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/idlestat"
)

// The split of a blocks round trip into its parts, from the kernel's
// software receive stamps (SO_TIMESTAMPNS) at both ends. A stamp is taken
// when the driver hands a datagram to the stack (kernel
// Documentation/networking/timestamping.rst), so per block:
//
//   - the requester's wake-up: from the stamp of the block's datagram to
//     the requester's read returning with it;
//   - the responder's wake-up: from the stamp of the request to the
//     responder's read returning with it;
//   - the responder's work: from that read to the send of the block;
//   - network and stacks: the round trip minus the three, i.e. both ends'
//     send paths, the wire both ways and the receive paths up to the stamps.
//
// The responder sends each block with the time it held the request (from
// the stamp to the send, Header.Held), so the requester knows the last
// part per block; the responder reports its two parts in its Side.

// SideSplit is one end's parts of a blocks run's round trips. A part is
// absent where the kernel gave no stamp (never 0).
type SideSplit struct {
	// Wake is from the kernel's receive stamp to the read, beyond the
	// end's receive path awake (ReceivePath): of the block that completed
	// (requester) or of the request (responder).
	Wake *Latency `json:"wake,omitempty"`
	// ReceivePath is the end's receive path with its reader awake, ns
	// (awake_linux.go), measured before the run and counted in network
	// and stacks; absent with ReceivePathErr saying why, and then Wake
	// holds it.
	ReceivePath    *int64 `json:"receive_path_awake_ns,omitempty"`
	ReceivePathErr string `json:"receive_path_unmeasured,omitempty"`
	// Work (responder) is from the read of a request to the send of its
	// block.
	Work *Latency `json:"work,omitempty"`
	// Rest (requester) is per block the round trip minus Wake minus the
	// responder's hold: both stacks and the wire, both ways.
	Rest *Latency `json:"network_and_stacks,omitempty"`
	// Unstamped counts the datagrams read without a kernel stamp;
	// Unheld (requester) the blocks whose responder sent no hold.
	Unstamped int64 `json:"unstamped,omitempty"`
	Unheld    int64 `json:"unheld,omitempty"`
	// Stamps says why there were no stamps at all ("" when there were).
	Stamps string `json:"stamps_unavailable,omitempty"`
	// Idle is what this end's host's CPUs counted in their idle states
	// over the end's run; nil where the kernel has no cpuidle.
	Idle *idlestat.Delta `json:"cpu_idle,omitempty"`
	// Host names the end's host (its boot id), so two ends on one host
	// count its idle states once.
	Host string `json:"host,omitempty"`
}

// Split is a blocks flow's round trip split into its parts, each a
// distribution; a part is absent when either end could not measure it.
type Split struct {
	RequesterWake    *Latency `json:"requester_wake,omitempty"`
	ResponderWake    *Latency `json:"responder_wake,omitempty"`
	ResponderWork    *Latency `json:"responder_work,omitempty"`
	NetworkAndStacks *Latency `json:"network_and_stacks,omitempty"`
	// RequesterReceivePath and ResponderReceivePath are the ends' receive
	// paths with the reader awake, ns: the part of a stamp-to-read that
	// is not a wake-up, counted in NetworkAndStacks.
	RequesterReceivePath *int64 `json:"requester_receive_path_ns,omitempty"`
	ResponderReceivePath *int64 `json:"responder_receive_path_ns,omitempty"`
	// WakeP50Ns is the two wake-ups' p50s added; WakeShare is that over
	// the round trip's p50. Absent unless both wake-ups are known.
	WakeP50Ns *int64   `json:"wake_p50_ns,omitempty"`
	WakeShare *float64 `json:"wake_share,omitempty"`
	// WakeDominant says the wake-ups are most of the round trip (a share
	// of WakeDominates or more) and the CPUs did go to sleep (at least
	// one idle entry per block, where the kernel counts them): the
	// verdict. On CPUs kept awake (a PM QoS hold, other load) the
	// wake-up parts are the receive path and the scheduling, which no
	// idle setting changes.
	WakeDominant bool `json:"wake_dominant,omitempty"`
	// AccountedPercent is the four parts' p50s added, as a percentage
	// of the round trip's p50 (absent unless all four are known).
	// Unaccounted says why they miss it by more than SplitTolerance.
	AccountedPercent *float64 `json:"accounted_percent,omitempty"`
	Unaccounted      string   `json:"unaccounted,omitempty"`
	// Missing says which parts are absent and why.
	Missing []string `json:"missing,omitempty"`
	// Fragments is how many IP fragments a block's datagram travelled in
	// (0 or 1: not fragmented); its stamp is then the reassembled
	// datagram's, which the kernel takes from the last fragment to arrive.
	Fragments int `json:"fragments,omitempty"`
	// IdleEntriesPerBlock is how often the CPUs of the ends' hosts
	// entered an idle state where they sleep (not POLL) per block (all
	// CPUs, each host counted once); absent where a host has no cpuidle.
	IdleEntriesPerBlock *float64 `json:"idle_entries_per_block,omitempty"`
	// Hosts is how many hosts the ends ran on (1: one host, both ends).
	Hosts int `json:"hosts,omitempty"`
}

// SplitEvery is the share of an end's reads that ask for stamps: one in
// four. A read that asks for control data takes the kernel's longer path
// (recvmsg with a message header instead of recvfrom), which on a KVM
// guest here cost 0.3 us a read more, and 0.4 to 0.9 us with recvmmsg;
// every read stamped cost 8 % of an end's CPU per block. The requester
// marks the first SplitRun of every SplitRun*SplitEvery requests it sends
// (FlagSampling), and both ends read with stamps after a marked request.
// So both ends stamp the same blocks, a quarter of them in runs of
// SplitRun, chosen by count, not by latency: each end's parts and
// network and stacks (which needs both ends' stamps) are percentiles of
// that sample.
const SplitEvery = 4

// SplitRun is how many requests in a row are marked for stamps (see
// SplitEvery).
const SplitRun = 64

// SplitTolerance is how far (as a share) the parts' p50s may miss the
// round trip's p50 before the report says why.
const SplitTolerance = 0.15

// WakeDominates is the share of the round trip's p50 above which the
// wake-ups are said to be most of it.
const WakeDominates = 0.5

// splitOf combines the two ends' parts of a blocks flow; nil when the
// split was off or neither end measured anything.
func splitOf(s *Summary, client, server *Side) *Split {
	cs, ss := client.Split, server.Split
	if cs == nil && ss == nil {
		return nil
	}
	sp := &Split{}
	if cs != nil {
		sp.RequesterWake, sp.NetworkAndStacks, sp.RequesterReceivePath = cs.Wake, cs.Rest, cs.ReceivePath
		if cs.Stamps != "" {
			sp.Missing = append(sp.Missing, "requester: "+cs.Stamps)
		} else if cs.ReceivePathErr != "" {
			sp.Missing = append(sp.Missing, "requester's receive path awake: "+cs.ReceivePathErr+" (its wake-up holds it)")
		} else if cs.Rest == nil && cs.Unheld > 0 {
			sp.Missing = append(sp.Missing, "network and stacks: the agent sent no hold time with its blocks (an agent from before the split, or without stamps)")
		}
	}
	if ss != nil {
		sp.ResponderWake, sp.ResponderWork, sp.ResponderReceivePath = ss.Wake, ss.Work, ss.ReceivePath
		if ss.Stamps != "" {
			sp.Missing = append(sp.Missing, "responder: "+ss.Stamps)
		} else if ss.ReceivePathErr != "" {
			sp.Missing = append(sp.Missing, "responder's receive path awake: "+ss.ReceivePathErr+" (its wake-up holds it)")
		} else if ss.ReceivePath == nil && ss.Wake != nil {
			sp.Missing = append(sp.Missing, "responder's receive path awake: the agent did not measure it (an agent from before it): its wake-up holds it")
		}
	} else {
		sp.Missing = append(sp.Missing, "responder's parts: the agent did not report them (an agent from before the split)")
	}
	if s.MTU > 0 && s.Chunks <= 1 {
		if n := PacketsPerDatagram(blockSizeOf(s), s.MTU); n > 1 {
			sp.Fragments = n
		}
	}
	sp.idle(s, cs, ss)
	sp.judge(s.RTT)
	if sp.IdleEntriesPerBlock != nil && *sp.IdleEntriesPerBlock < 1 {
		sp.WakeDominant = false
	}
	return sp
}

// NewSplit is a round trip rtt split into the four parts (any nil: not
// measured), judged as splitOf judges bench's: the wake-ups' share and how
// far the parts' p50s account for the round trip's. For gc's pairs.
func NewSplit(rtt, requesterWake, responderWake, responderWork, rest *Latency) *Split {
	if requesterWake == nil && responderWake == nil && responderWork == nil && rest == nil {
		return nil
	}
	sp := &Split{RequesterWake: requesterWake, ResponderWake: responderWake, ResponderWork: responderWork, NetworkAndStacks: rest}
	sp.judge(rtt)
	return sp
}

// judge fills the wake-ups' share of rtt's p50 and how far the parts'
// p50s account for it.
func (sp *Split) judge(rtt *Latency) {
	if rtt == nil || rtt.P50 <= 0 {
		return
	}
	if sp.RequesterWake != nil && sp.ResponderWake != nil {
		w := sp.RequesterWake.P50 + sp.ResponderWake.P50
		share := float64(w) / float64(rtt.P50)
		sp.WakeP50Ns, sp.WakeShare = &w, &share
		sp.WakeDominant = share >= WakeDominates
	}
	sum := int64(0)
	for _, p := range sp.Parts() {
		if p.L == nil {
			return
		}
		sum += p.L.P50
	}
	acc := 100 * float64(sum) / float64(rtt.P50)
	sp.AccountedPercent = &acc
	if acc < 100*(1-SplitTolerance) || acc > 100*(1+SplitTolerance) {
		sp.Unaccounted = "the parts vary from block to block and are not independent: the p50 of a sum is not the sum of the p50s when a part's distribution is wide (see their p90s)"
	}
}

// blockSizeOf is the block size of a blocks summary (its bytes over its
// blocks).
func blockSizeOf(s *Summary) int {
	if s.Messages == 0 {
		return 0
	}
	return int(s.Bytes / s.Messages)
}

// idle adds the hosts' idle-state entries per block, each host once.
func (sp *Split) idle(s *Summary, cs, ss *SideSplit) {
	if s.Messages == 0 {
		return
	}
	var entries int64
	hosts := map[string]bool{}
	for _, e := range []*SideSplit{cs, ss} {
		if e == nil {
			continue
		}
		if e.Idle == nil {
			return // one host unknown: the figure would be half of one
		}
		if e.Host != "" && hosts[e.Host] {
			continue
		}
		hosts[e.Host] = true
		entries += e.Idle.SleepEntries
	}
	if len(hosts) == 0 {
		return
	}
	per := float64(entries) / float64(s.Messages)
	sp.IdleEntriesPerBlock, sp.Hosts = &per, len(hosts)
}

// WakeVerdict is the one line that says the round trip is mostly the two
// hosts waking up, or "" when it is not (or the split is not known).
func (sp *Split) WakeVerdict(rttP50 int64) string {
	if sp == nil || !sp.WakeDominant || sp.WakeP50Ns == nil {
		return ""
	}
	return fmt.Sprintf("the round trip is mostly the two hosts waking up (%.0f of %.0f us): a network change (MTU, switch, cabling) will barely show here; see check CPU-IDLE",
		float64(*sp.WakeP50Ns)/1e3, float64(rttP50)/1e3)
}

// StampNote says what a receive stamp cannot see, for the text and the
// HTML alike.
func (sp *Split) StampNote() string {
	n := "a receive stamp is taken when the driver hands the datagram to the stack: on a real NIC or virtio, waking the CPU that takes the interrupt comes before it and counts in network and stacks; on veth (a lab) the hand-off runs in the sender's context; the receive path above the driver (IP, reassembly, UDP, the read's copy) runs after the stamp: each end measured it with its reader awake before the run" + sp.receivePaths() + ", counted it in network and stacks, and a wake-up is what a read took beyond it"
	if sp.Fragments > 1 {
		n += fmt.Sprintf("; a block's datagram crossed in %d IP fragments and carries the stamp of the last to arrive (reassembly)", sp.Fragments)
	}
	return n
}

// receivePaths is " (requester X us, responder Y us)" of the ends' receive
// paths awake that are known, "" when none is.
func (sp *Split) receivePaths() string {
	var p []string
	for _, e := range []struct {
		name string
		ns   *int64
	}{{"requester", sp.RequesterReceivePath}, {"responder", sp.ResponderReceivePath}} {
		if e.ns != nil {
			p = append(p, e.name+" "+us(*e.ns))
		}
	}
	if len(p) == 0 {
		return ""
	}
	return " (" + strings.Join(p, ", ") + ")"
}

// IdleNote says how often the hosts' CPUs went idle per block, and what
// that means for the wake-ups; "" when not known.
func (sp *Split) IdleNote() string {
	if sp.IdleEntriesPerBlock == nil {
		return ""
	}
	where := fmt.Sprintf("the %d hosts' CPUs", sp.Hosts)
	if sp.Hosts == 1 {
		where = "this host's CPUs (every end on it)"
	}
	per := *sp.IdleEntriesPerBlock
	if per < 1 {
		return fmt.Sprintf("%s went to sleep in an idle state (not polling) %.2f times per block: they seldom slept, so the wake-ups above are threads being scheduled, not CPUs leaving an idle state", where, per)
	}
	return fmt.Sprintf("%s went to sleep in an idle state (not polling) %.2f times per block: the readers' own wake-ups account for up to 2 (3 on a gc 3-way trip); more are CPUs woken for something else, such as the one taking a NIC's interrupt, whose wake-up lands in network and stacks", where, per)
}
