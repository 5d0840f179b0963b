package gc

import (
	"time"

	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmqos"
	"github.com/interlink/interlink/internal/traffic"
)

// Schema is the schema of `interlink bench --mode gc --json`.
const Schema = "interlink.gc/v1"

// Report is the result of a run (schema interlink.gc/v1). Times are ns,
// rates per second; a receive time is from the request's send to the
// block's last datagram, at the requester.
type Report struct {
	Schema string    `json:"schema"`
	Spec   Spec      `json:"spec"`
	Start  time.Time `json:"start"`
	// Nodes are the measured nodes, Pairs every requester and server
	// among them, Pings AWR's "Interconnect Ping Latency Stats" table.
	Nodes []Node    `json:"nodes"`
	Pairs []Pair    `json:"pairs"`
	Pings []PingRow `json:"pings,omitempty"` // none with --ping-interval 0
	Total Total     `json:"total"`
	// Unreachable lists the named nodes that took no part (their agent
	// could not be reached or refused the run).
	Unreachable []mesh.Unreachable `json:"unreachable,omitempty"`
	// LimitedBy says which limits held the run back (the agents' send
	// limits): its figures then describe the limit, not the network.
	LimitedBy []string `json:"limited_by,omitempty"`
	// Verdict is VerdictOK, VerdictLimited, VerdictWarning or
	// VerdictFailed; Problems say why.
	Verdict     string    `json:"verdict"`
	Problems    []Problem `json:"problems,omitempty"`
	Interrupted bool      `json:"interrupted,omitempty"`
	// CPULatency says which hosts held a PM QoS CPU latency request for
	// the run (bench --cpu-latency); nil when none was asked for.
	CPULatency *pmqos.Report `json:"cpu_latency,omitempty"`
}

// Node is one node's figures: as requester (its own requests and the
// blocks it received), as server, and its cost.
type Node struct {
	Name  string `json:"name"`
	Agent string `json:"agent"`
	Addr  string `json:"addr"` // data endpoint
	// MTU is that of the interface holding the node's data endpoint;
	// absent (0) when the agent found none.
	MTU int `json:"mtu,omitempty"`
	// DurationNs is how long the node issued requests.
	DurationNs int64 `json:"duration_ns"`
	Requests   int64 `json:"requests"`
	Received   int64 `json:"received"`
	Served     int64 `json:"served"`
	LocalHits  int64 `json:"local_hits"`
	Lost       int64 `json:"lost"`
	// BlocksPerSec are the blocks the node received per second.
	BlocksPerSec float64          `json:"blocks_per_sec"`
	TwoWay       *latency.Summary `json:"two_way,omitempty"`
	ThreeWay     *latency.Summary `json:"three_way,omitempty"`
	// LostWhere says where the kernel of this node saw its lost blocks go
	// (blocks the master routed that never arrived whole).
	LostWhere *LostWhere `json:"lost_where,omitempty"`
	// Events are the node's receive times in AWR's wait events.
	Events []Event `json:"events"`
	// CPU is the node's engine thread (user, system) and its host's
	// softirq time; per block received. SharedHost counts the nodes of the
	// run on this node's host (a lab): each of them sees the whole host's
	// softirq time.
	CPU         traffic.CPU `json:"cpu"`
	CPUPerBlock PerBlock    `json:"cpu_per_block"`
	SharedHost  int         `json:"shared_host,omitempty"`
	// SharedNetns counts the nodes of the run in this node's network
	// namespace (agents on one host's loopback): their counters are the
	// namespace's, so its packet figures are the namespace's, over those
	// nodes' blocks.
	SharedNetns int `json:"shared_netns,omitempty"`
	// ForeignUDP counts the UDP datagrams the node's namespace sent during
	// the run beyond the run's own (other programs, other tests on the
	// same loopback): its packet figures are then absent.
	ForeignUDP int64 `json:"foreign_udp_datagrams,omitempty"`
	// FragmentsPerBlock is the IP packets each block the node shipped
	// travelled in (6 for 8 KiB at MTU 1500, 1 at 9000); PacketsPerBlock
	// every UDP packet the node sent per block it received. Both are
	// absent (0) when the node's kernel lacks a counter they need.
	FragmentsPerBlock float64          `json:"fragments_per_block,omitempty"`
	PacketsPerBlock   float64          `json:"packets_per_block,omitempty"`
	Counters          traffic.Counters `json:"counters"`
	Unproven          []string         `json:"unproven,omitempty"`
	Dropped           int64            `json:"dropped"`
	Truncated         int64            `json:"truncated,omitempty"` // datagrams read short (NodeRun.Truncated)
	RateWaitedNs      int64            `json:"rate_waited_ns"`
	Error             string           `json:"error,omitempty"`
}

// PerBlock is CPU time per block, ns.
type PerBlock struct {
	UserNs    float64 `json:"user_ns"`
	SystemNs  float64 `json:"system_ns"`
	SoftIRQNs float64 `json:"softirq_ns"`
}

// LostWhere splits a node's lost blocks by what its kernel counted: its
// socket's receive buffer overflowing (Udp RcvbufErrors), IP reassembly
// failing (Ip ReasmFails: the kernel counts a reassembly that times out
// only after net.ipv4.ipfrag_time, 30 s by default), and nothing seen (lost
// in the network before this node).
type LostWhere struct {
	// Truncated: blocks that had a datagram read short at this node
	// (at most one block per such datagram): not network loss.
	Truncated     int64 `json:"truncated,omitempty"`
	ReceiveBuffer int64 `json:"receive_buffer"`
	Reassembly    int64 `json:"reassembly"`
	NothingSeen   int64 `json:"nothing_seen"`
}

// Event is one of AWR's global cache wait events at a node: how many
// blocks waited and the mean wait (a lost block waits the timeout).
type Event struct {
	Event string  `json:"event"`
	Waits int64   `json:"waits"`
	AvgNs float64 `json:"avg_ns,omitempty"` // absent without waits
}

// Pair is what Requester received from Server. Requested counts the
// requests whose block Server was to ship (as their masters routed them,
// plus those lost before or at a master that was Server): it equals
// Received plus Lost when every request is accounted for (Balanced).
type Pair struct {
	Requester    string           `json:"requester"`
	Server       string           `json:"server"`
	Requested    int64            `json:"requested"`
	Received     int64            `json:"received"`
	Lost         int64            `json:"lost"`
	LostBy       Lost             `json:"lost_by"`
	Late         int64            `json:"late_datagrams"`
	Balanced     bool             `json:"balanced"`
	BlocksPerSec float64          `json:"blocks_per_sec"`
	TwoWay       *latency.Summary `json:"two_way,omitempty"`
	ThreeWay     *latency.Summary `json:"three_way,omitempty"`
	// TwoWaySplit and ThreeWaySplit are those receive times split into
	// their parts (split.go): the responder's parts are the servers'
	// (the master's and the holder's added on a 3-way trip).
	TwoWaySplit   *traffic.Split `json:"two_way_split,omitempty"`
	ThreeWaySplit *traffic.Split `json:"three_way_split,omitempty"`
}

// PingRow is a row of AWR's "Interconnect Ping Latency Stats": pings from
// Node to Target (the node itself as control), 500 bytes and 8 KiB.
type PingRow struct {
	Node   string `json:"node"`
	Target string `json:"target"`
	Small  Pings  `json:"ping_500b"`
	Large  Pings  `json:"ping_8k"`
}

// Pings are the round trips of one size: count, mean and standard
// deviation (as AWR), and the pings that never came back. Without a ping
// that came back (Count 0) the times are not figures: absent from the
// JSON, n/a in text.
type Pings struct {
	Count    int64   `json:"count"`
	AvgNs    float64 `json:"avg_ns"`
	StddevNs float64 `json:"stddev_ns"`
	MinNs    int64   `json:"min_ns"`
	P50Ns    int64   `json:"p50_ns"`
	MaxNs    int64   `json:"max_ns"`
	Lost     int64   `json:"lost"`
}

// Total is the run over every node.
type Total struct {
	Requested    int64   `json:"requested"`
	Received     int64   `json:"received"`
	Lost         int64   `json:"lost"`
	LocalHits    int64   `json:"local_hits"`
	BlocksPerSec float64 `json:"blocks_per_sec"`
	// TwoWay and ThreeWay are the receive times of every node;
	// ThreeWayPercent the share of received blocks that took 3 hops.
	TwoWay          *latency.Summary `json:"two_way,omitempty"`
	ThreeWay        *latency.Summary `json:"three_way,omitempty"`
	ThreeWayPercent float64          `json:"three_way_percent"`
	// CPU of the nodes' engines per block received; softirq counts each
	// host once.
	CPUPerBlock       PerBlock `json:"cpu_per_block"`
	CPUNsPerBlock     float64  `json:"cpu_ns_per_block"`              // user + system
	FragmentsPerBlock float64  `json:"fragments_per_block,omitempty"` // absent when a node lacks the counters
	PacketsPerBlock   float64  `json:"packets_per_block,omitempty"`
	// Ping500AvgNs and Ping8KAvgNs are the mean round trips of every ping
	// from a node to another (the control pings to itself left out).
	Ping500AvgNs float64 `json:"ping_500b_avg_ns,omitempty"`
	Ping8KAvgNs  float64 `json:"ping_8k_avg_ns,omitempty"`
}

// Verdicts and problems.
const (
	VerdictOK      = "ok"
	VerdictLimited = "limited" // a send limit held the run back
	VerdictWarning = "warning" // some blocks lost (at most MaxLossPercent on every pair), or unbalanced accounting
	VerdictFailed  = "failed"  // a pair lost more, a node had no path or failed

	ProblemLoss       = "block-loss"
	ProblemNoPath     = "no-path"
	ProblemNodeError  = "node-error"
	ProblemAccounting = "accounting"
	ProblemTruncated  = "truncated" // datagrams read short at a node: not network loss
)

// MaxLossPercent is the share of a pair's blocks that may be lost before
// the run fails (bench's blocks mode fails at the same share).
const MaxLossPercent = traffic.MaxBlockLossPercent

// Problem is a reason for the verdict.
type Problem struct {
	Problem  string `json:"problem"`
	Critical bool   `json:"critical"`
	Detail   string `json:"detail"`
}
