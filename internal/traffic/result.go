package traffic

import (
	"time"

	"github.com/interlink/interlink/internal/latency"
)

// Role is what one end does in a flow.
type Role string

// Roles.
const (
	RoleSender    Role = "sender"
	RoleReceiver  Role = "receiver"
	RoleRequester Role = "requester"
	RoleResponder Role = "responder"
)

// Direction of a flow relative to the end that started the test (the
// client, where `interlink bench` runs).
type Direction string

// Directions.
const (
	Forward Direction = "forward" // client sends (or requests blocks)
	Reverse Direction = "reverse" // peer sends
)

// Result is one test: what was asked, and one Flow per direction (two with
// --bidir).
type Result struct {
	Spec  Spec      `json:"spec"`
	Start time.Time `json:"start"`
	Flows []Flow    `json:"flows"`
	// LimitedBy lists every limit that held the result back (the agent's
	// send limit, its session length, the run's own deadline): the figures
	// then describe the limit, not the path. Empty when none did.
	LimitedBy []Limit `json:"limited_by,omitempty"`
	// Verdict is VerdictOK, VerdictLimited or VerdictFailed (see Judge);
	// Problems say why a run failed.
	Verdict  string    `json:"verdict"`
	Problems []Problem `json:"problems,omitempty"`
}

// Flow is one direction of a test, measured at both ends.
type Flow struct {
	Direction Direction `json:"direction"`
	Client    *Side     `json:"client"`
	Server    *Side     `json:"server"`
	Summary   Summary   `json:"summary"`
}

// Side is what one end measured of one flow. Counters are the deltas of the
// end's network namespace over its run; CPU is its hot threads' own time.
type Side struct {
	Role      Role          `json:"role"`
	Duration  time.Duration `json:"duration_ns"`
	Bytes     int64         `json:"bytes"`    // payload bytes sent or received
	Messages  int64         `json:"messages"` // writes, datagrams or blocks (for a responder: blocks sent)
	MTU       int           `json:"mtu,omitempty"`
	Intervals []Interval    `json:"intervals"`
	Streams   []Stream      `json:"streams,omitempty"`
	UDP       *UDPStats     `json:"udp,omitempty"`
	Blocks    *BlockStats   `json:"blocks,omitempty"`
	// Split is a blocks end's parts of the round trips (split.go); nil
	// with the split off, or from an agent from before it.
	Split    *SideSplit `json:"split,omitempty"`
	CPU      CPU        `json:"cpu"`
	Counters Counters   `json:"counters"`
	// Error is set when the end stopped early on an error; what it measured
	// until then is kept.
	Error string `json:"error,omitempty"`
	// Cut is set when the end was still running at the run's deadline
	// (--time plus a grace) and was stopped there: it stalled.
	Cut bool `json:"cut_at_deadline,omitempty"`
	// LimitedBy lists the limits that held this end back (the agent's
	// send limit, its session length).
	LimitedBy []Limit `json:"limited_by,omitempty"`
	// Netns names the network namespace whose counters Counters are (the
	// host's boot id and the namespace's inode); empty from an agent
	// that does not say. Two ends with the same one (a bench against an
	// agent on loopback) each count both ends' packets.
	Netns string `json:"netns,omitempty"`
}

// Interval is one per-interval line, from one end's point of view.
type Interval struct {
	Start      time.Duration `json:"start_ns"` // since the end started
	End        time.Duration `json:"end_ns"`
	Bytes      int64         `json:"bytes"`
	Messages   int64         `json:"messages"`
	BitsPerSec float64       `json:"bits_per_sec"`
	// TCP sender: retransmitted segments in the interval and the smoothed
	// RTT at its end (the mean over streams).
	Retransmits int64 `json:"retransmits,omitempty"`
	RTT         int64 `json:"rtt_ns,omitempty"`
	CwndBytes   int64 `json:"cwnd_bytes,omitempty"`
	// UDP receiver: gaps opened in the interval (late arrivals subtract),
	// reordered and duplicate datagrams, jitter at the end of the interval.
	Lost       int64 `json:"lost,omitempty"`
	Truncated  int64 `json:"truncated,omitempty"` // datagrams read short (UDPStats.Truncated)
	Reordered  int64 `json:"reordered,omitempty"`
	Duplicates int64 `json:"duplicates,omitempty"`
	Jitter     int64 `json:"jitter_ns,omitempty"`
	// Blocks requester: latency of the interval's blocks and blocks lost.
	RTTPercentiles *Latency `json:"rtt,omitempty"`
	LostBlocks     int64    `json:"lost_blocks,omitempty"`
}

// Stream is one TCP connection's figures (TCP_INFO at the sender).
type Stream struct {
	Bytes       int64 `json:"bytes"`
	Retransmits int64 `json:"retransmits"`
	RTT         int64 `json:"rtt_ns"`
	RTTVar      int64 `json:"rttvar_ns"`
	// MinRTT is absent where the kernel's TCP_INFO lacks it (before 4.6).
	MinRTT    *int64 `json:"min_rtt_ns,omitempty"`
	MSS       int    `json:"mss"`
	PMTU      int    `json:"pmtu"`
	CwndBytes int64  `json:"cwnd_bytes"`
	// LargestPacket (receiver) is the largest IP packet of the stream that
	// arrived, from the largest segment received (TCP_INFO rcv_mss).
	LargestPacket int `json:"largest_packet,omitempty"`
}

// NoGSOEnv is the environment variable that turns UDP segmentation offload
// off in this process (any value but "" and "0"): each datagram is then its
// own send, as on a kernel before 4.18. A diagnostic knob (docs/bench.md):
// set it for both `interlink bench` and `interlink agent` to measure the
// path as such a kernel sends.
const NoGSOEnv = "INTERLINK_NO_GSO"

// UDPStats is the sequence accounting of a UDP receiver, or the send count
// of a sender.
type UDPStats struct {
	Sent       int64 `json:"sent,omitempty"` // sender: datagrams handed to the kernel
	Received   int64 `json:"received"`       // unique datagrams
	Lost       int64 `json:"lost"`           // gaps below the highest number seen
	Reordered  int64 `json:"reordered"`
	Duplicates int64 `json:"duplicates"`
	Jitter     int64 `json:"jitter_ns"`
	Foreign    int64 `json:"foreign,omitempty"` // datagrams that were not ours (bad header or tag)
	// GSO is how many datagrams the sender handed the kernel per buffer
	// (UDP_SEGMENT); the kernel's IP counters then count a buffer once.
	GSO int `json:"gso_segments,omitempty"`
	// NoGSO says why an unpaced sender whose datagrams fit the MTU sent
	// each datagram on its own (no UDP_SEGMENT): the kernel lacks it, or
	// INTERLINK_NO_GSO is set. Empty when GSO was used or not applicable.
	NoGSO string `json:"no_gso,omitempty"`
	// LateNs is how far a paced sender fell behind its schedule beyond the
	// backlog it may catch up in a burst (10 ms), in all: time its thread
	// was not given a CPU or its sends blocked. It skipped that schedule,
	// so it sent that much under the rate asked (a limit past lateShare).
	LateNs int64 `json:"late_ns,omitempty"`
	// Truncated counts datagrams read short: larger than this run sends
	// (the receive buffer holds the largest), so not one of its datagrams
	// as sent. Joined counts this run's datagrams found inside them (a
	// sending kernel that ignored UDP_SEGMENT joins a whole buffer into
	// one datagram): those are neither received nor lost.
	Truncated int64 `json:"truncated,omitempty"`
	Joined    int64 `json:"joined,omitempty"`
	// Flow is a flow-controlled sender's account of its window (flow.go).
	// A receiver that took part counts its feedback datagrams and says
	// how large its socket buffer was (SO_RCVBUF as the kernel has it).
	Flow               *FlowStats `json:"flow,omitempty"`
	FeedbackSent       int64      `json:"feedback_sent,omitempty"`
	ReceiveBufferBytes int        `json:"receive_buffer_bytes,omitempty"`
}

// BlockStats is what a blocks requester counted (or a responder answered).
type BlockStats struct {
	Requests  int64 `json:"requests"`  // requests sent (responder: received)
	Completed int64 `json:"completed"` // blocks received whole (responder: answered)
	Lost      int64 `json:"lost"`      // no whole block within the timeout
	Late      int64 `json:"late"`      // chunks that arrived after their block was declared lost
	// Truncated counts datagrams read short (larger than any of the run:
	// not a chunk or request as sent); a block that lost one is lost here,
	// not in the network.
	Truncated int64    `json:"truncated,omitempty"`
	Chunks    int      `json:"chunks"` // UDP datagrams per block (more than 1 above 64 KiB)
	RTT       *Latency `json:"rtt,omitempty"`
	Foreign   int64    `json:"foreign,omitempty"`
}

// Latency summarises round-trip times, in ns.
type Latency = latency.Summary

// CPU is the processor time of one end's part in a flow. User and System
// are its hot threads' own time (getrusage RUSAGE_THREAD); SoftIRQ is the
// host's softirq time over the same span (/proc/stat, all CPUs), where the
// kernel does most receive work and which per-thread accounting never
// shows. Two ends on one host see the same softirq.
type CPU struct {
	Threads   int   `json:"threads"`
	UserNs    int64 `json:"user_ns"`
	SystemNs  int64 `json:"system_ns"`
	SoftIRQNs int64 `json:"softirq_ns"`
	Pinned    *int  `json:"pinned_cpu,omitempty"`
}

// Counters are kernel counter deltas of one end's network namespace over its
// run (/proc/net/snmp and netstat). A counter the kernel does not keep is
// named in NotAvailable, left 0 here and absent from the JSON (avail.go).
type Counters struct {
	IPInReceives    int64 `json:"ip_in_receives"`
	IPOutRequests   int64 `json:"ip_out_requests"`
	IPOutDiscards   int64 `json:"ip_out_discards"`
	FragOKs         int64 `json:"ip_frag_oks"`
	FragCreates     int64 `json:"ip_frag_creates"`
	FragFails       int64 `json:"ip_frag_fails"`
	ReasmReqds      int64 `json:"ip_reasm_reqds"`
	ReasmOKs        int64 `json:"ip_reasm_oks"`
	ReasmFails      int64 `json:"ip_reasm_fails"`
	ReasmTimeout    int64 `json:"ip_reasm_timeout"`
	UDPInDatagrams  int64 `json:"udp_in_datagrams"`
	UDPOutDatagrams int64 `json:"udp_out_datagrams"`
	UDPRcvbufErrors int64 `json:"udp_rcvbuf_errors"`
	UDPSndbufErrors int64 `json:"udp_sndbuf_errors"`
	UDPInErrors     int64 `json:"udp_in_errors"`
	TCPInSegs       int64 `json:"tcp_in_segs"`
	TCPOutSegs      int64 `json:"tcp_out_segs"`
	TCPRetransSegs  int64 `json:"tcp_retrans_segs"`
	// NotAvailable lists the JSON names of the counters this kernel
	// does not keep.
	NotAvailable []string `json:"not_available,omitempty"`
}

// PacketsOut is the number of UDP packets the namespace sent: each
// fragmented datagram counts as its fragments. It counts UDP datagrams
// (Udp OutDatagrams) rather than every IP packet (Ip OutRequests) so the
// TCP segments of the agent's control session, which run during the test,
// do not inflate the per-message figures of udp and blocks runs.
func (c Counters) PacketsOut() int64 { return c.UDPOutDatagrams - c.FragOKs + c.FragCreates }

// Summary is a flow's result, combining both ends.
type Summary struct {
	Duration   time.Duration `json:"duration_ns"`
	Bytes      int64         `json:"bytes"` // payload delivered to the receiver
	BitsPerSec float64       `json:"bits_per_sec"`
	Messages   int64         `json:"messages"` // datagrams or blocks delivered
	PerSec     float64       `json:"messages_per_sec"`
	// MTU is the interface (route) MTU toward the peer, as the kernel has
	// it; LargestPacket is the largest IP packet this run saw arrive, and
	// MTUProven says that packets of the full MTU crossed the path. An MTU
	// that is not proven is only what the interface says.
	MTU           int  `json:"mtu,omitempty"`
	LargestPacket int  `json:"largest_packet,omitempty"`
	MTUProven     bool `json:"mtu_proven"`

	// TCP.
	Retransmits int64 `json:"retransmits,omitempty"`

	// UDP and blocks: messages sent and lost (sent minus delivered, the
	// receiver's own count), and where they were lost.
	Sent        int64   `json:"sent,omitempty"`
	Lost        int64   `json:"lost"`
	LossPercent float64 `json:"loss_percent"`
	// Truncated counts datagrams the receiving end read short (larger
	// than the run sends); Joined the sent datagrams found inside them,
	// which count neither as delivered nor as lost (see UDPStats).
	Truncated  int64       `json:"truncated,omitempty"`
	Joined     int64       `json:"joined,omitempty"`
	Reordered  int64       `json:"reordered,omitempty"`
	Duplicates int64       `json:"duplicates,omitempty"`
	Jitter     int64       `json:"jitter_ns,omitempty"`
	LossBy     *LossPlaces `json:"loss_by_place,omitempty"`
	// Flow is the flow control of an unpaced UDP run: its window, and
	// which end was the bottleneck.
	Flow *FlowSummary `json:"flow,omitempty"`
	RTT  *Latency     `json:"rtt,omitempty"`
	// RTTPaced is set when the responder's sends were held back by a rate
	// limit during the run: the round trips then include that pacing and
	// are not the path's latency.
	RTTPaced bool `json:"rtt_paced,omitempty"`
	Chunks   int  `json:"chunks_per_block,omitempty"`
	// Split is the blocks round trip split into its parts (split.go).
	Split *Split `json:"split,omitempty"`

	// Packets: FragmentsPerMessage is the IP packets one message travels in
	// (1.0: not fragmented; 6.0 for 8 KiB at MTU 1500); PacketsPerMessage
	// counts every IP packet both ends sent (requests, ACKs) per message
	// delivered. Reassembly counters are the receiving end's.
	FragmentsPerMessage float64 `json:"fragments_per_message,omitempty"`
	PacketsPerMessage   float64 `json:"packets_per_message,omitempty"`
	// SharedNetns says both ends ran in one network namespace (an agent
	// on loopback): its counters hold both ends' packets, so fragments
	// per message leave out the other end's datagrams (requests,
	// feedback: their count is known) and packets per message count the
	// namespace once.
	SharedNetns bool `json:"shared_netns,omitempty"`
	// ForeignUDP counts the UDP datagrams the ends' namespaces sent during
	// the run beyond the run's own (other programs, other tests on the
	// same loopback): the counters then hold other traffic, and the
	// packet figures read from them are absent.
	ForeignUDP int64 `json:"foreign_udp_datagrams,omitempty"`
	// nil (absent) when the receiving end's kernel does not keep them.
	ReasmReqds *int64 `json:"reasm_reqds,omitempty"`
	ReasmOKs   *int64 `json:"reasm_oks,omitempty"`
	ReasmFails *int64 `json:"reasm_fails,omitempty"`

	// Cost of each end, per GiB delivered and per message delivered.
	ClientCost Cost `json:"client_cost"`
	ServerCost Cost `json:"server_cost"`

	// The wire limit for the path's MTU at the known link rate, and the
	// goodput as a share of it (absent when the link rate is unknown).
	WireLimitBitsPerSec float64 `json:"wire_limit_bits_per_sec,omitempty"`
	PercentOfWireLimit  float64 `json:"percent_of_wire_limit,omitempty"`

	// stream marks a TCP flow's summary: its JSON has no message counts
	// or loss (absent.go).
	stream bool
}

// LossPlaces splits lost messages by where they were lost: datagrams read
// short at an end (truncated), the sender's own
// queue (the local qdisc or device refused the datagram: Udp SndbufErrors at
// the sender), the receiver's socket buffer (Udp RcvbufErrors), IP
// reassembly at the receiver (Ip ReasmFails, at most what remains), and the
// rest, which was lost in the network between.
type LossPlaces struct {
	// Truncated is blocks lost because a datagram of theirs was read
	// short at an end (BlockStats.Truncated): not the network's loss.
	Truncated    int64 `json:"truncated,omitempty"`
	SenderQueue  int64 `json:"sender_queue"`
	SocketBuffer int64 `json:"socket_buffer"`
	Reassembly   int64 `json:"reassembly"`
	Network      int64 `json:"network"`
}

// Cost is an end's CPU normalised by what was delivered, in ns.
type Cost struct {
	CPUNs     int64 `json:"cpu_ns"` // user + system of the end's threads
	SoftIRQNs int64 `json:"softirq_ns"`
	// Per GiB delivered: absent when nothing was (softirq can be a
	// measured 0: /proc/stat counts it in ticks).
	CPUNsPerGiB     float64  `json:"cpu_ns_per_gib,omitempty"`
	SoftIRQNsPerGiB *float64 `json:"softirq_ns_per_gib,omitempty"`
	CPUNsPerMsg     float64  `json:"cpu_ns_per_message,omitempty"`
	SoftIRQNsPerMsg float64  `json:"softirq_ns_per_message,omitempty"`
	// Utilisation is CPU time over the flow's duration: 1.0 is one core
	// busy. An end near 1.0 was the bottleneck.
	Utilisation float64 `json:"utilisation"`
}
