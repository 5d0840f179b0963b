package gc

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/idlestat"
	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/traffic"
)

// NodeRun is what one node's engine measured in a run: the agent's answer
// to gc.result, from which Build makes the Report. Slices indexed by node
// have one entry per node of the run.
type NodeRun struct {
	Index int    `json:"index"`
	Addr  string `json:"addr"` // the node's data endpoint
	MTU   int    `json:"mtu"`  // of the interface that holds it
	// IssueNs is how long the node issued requests.
	IssueNs int64 `json:"issue_ns"`
	// Requests counts the requests the node sent (to masters, or to a
	// holder when it is the block's master itself); Local the blocks it
	// found in its own cache, by mode (cr, current).
	Requests int64    `json:"requests"`
	Local    [2]int64 `json:"local"`
	// LostByMode counts the node's lost blocks by mode (cr, current).
	LostByMode [2]int64 `json:"lost_by_mode"`
	// From is the node as requester, per server.
	From []FromStats `json:"from"`
	// Routed is the node as master: requests of [requester] it routed to
	// [server] (itself, or the holder it forwarded to).
	Routed [][]int64 `json:"routed"`
	// Served is the node as server: blocks shipped to [requester] by hops
	// (2-way, 3-way).
	Served [][2]int64 `json:"served"`
	// Events are the node's receive times by [mode][hops-2] (AWR's wait
	// events "gc cr block 2-way", ...).
	Events [2][2]EventStats `json:"events"`
	// Pings are the node's pings to [target] by size (PingSmall, PingLarge).
	Pings [][2]PingStats `json:"pings"`
	// Hist is the node's receive times by hops (2-way, 3-way), HDR
	// histograms in their compressed V2 encoding, for the cluster figures.
	Hist [2]string `json:"hist"`

	// Host is the node's boot id: nodes on one host (a lab) share its
	// softirq time, which each of them measures whole.
	Host string `json:"host"`
	// Netns names the network namespace the node's counters are of (its
	// inode); nodes of one host with the same one count each other's
	// packets. Empty from an agent that does not say.
	Netns string `json:"netns,omitempty"`
	// Idle is what the host's CPUs counted in their idle states over the
	// node's run; nil where the kernel has no cpuidle, or from an agent
	// from before it.
	Idle *idlestat.Delta `json:"cpu_idle,omitempty"`
	// ReceivePath is the node's receive paths with its reader awake,
	// taken out of its wake-ups (split.go); nil with the split off, or
	// from an agent from before it.
	ReceivePath *ReceivePaths    `json:"receive_path_awake,omitempty"`
	CPU         traffic.CPU      `json:"cpu"`
	Counters    traffic.Counters `json:"counters"`
	// OtherPackets are the IP packets of every datagram the node sent
	// that was not a block (requests, forwards, pings, ...), from their
	// sizes and the MTU; BlocksServed and ChunksServed what it shipped.
	OtherPackets int64 `json:"other_packets"`
	BlocksServed int64 `json:"blocks_served"`
	ChunksServed int64 `json:"chunks_served"`
	// DatagramsOut is every datagram the node's engines sent (blocks,
	// requests, forwards, pings): its namespace's counters sending clearly
	// more held other traffic. 0 from an agent that does not say.
	DatagramsOut int64 `json:"datagrams_out,omitempty"`
	// Unproven lists peers no authenticated datagram came from during
	// the setup: nothing was sent to them but hellos.
	Unproven []int `json:"unproven,omitempty"`
	// Dropped counts datagrams refused: not sealed for a live session of
	// the run, from another address than the peer announced, malformed.
	Dropped int64 `json:"dropped"`
	// Truncated counts datagrams read short (MSG_TRUNC: larger than any
	// datagram of the run, so not one as sent): neither received nor
	// garbage, and a block that lost one is not lost in the network.
	Truncated int64 `json:"truncated,omitempty"`
	// RateWaitedNs is how long the node's sends waited for the agent's
	// send limit.
	RateWaitedNs int64  `json:"rate_waited_ns"`
	Error        string `json:"error,omitempty"`

	// hists are Hist decoded by Validate (validated set), for Build.
	hists     [2]*hdrhistogram.Histogram
	validated bool
}

// FromStats is what a requester received from one server.
type FromStats struct {
	Received int64            `json:"received"`
	Late     int64            `json:"late"` // datagrams of blocks already counted lost
	Lost     Lost             `json:"lost"`
	TwoWay   *latency.Summary `json:"two_way,omitempty"`
	ThreeWay *latency.Summary `json:"three_way,omitempty"`
	// TwoWaySplit and ThreeWaySplit are those times' parts (split.go);
	// absent with the split off or from an agent from before it.
	TwoWaySplit   *PairParts `json:"two_way_split,omitempty"`
	ThreeWaySplit *PairParts `json:"three_way_split,omitempty"`
}

// Lost splits lost blocks by what the master knew of them.
type Lost struct {
	// Block: the master routed the request (to this server), the block
	// did not arrive whole in time.
	Block int64 `json:"block"`
	// Request: the master never saw the request (counted against the
	// master).
	Request int64 `json:"request"`
	// Unconfirmed: the master did not answer where the request went
	// (counted against the master).
	Unconfirmed int64 `json:"unconfirmed"`
	// NoPath: never sent, the master's data address was never proven.
	NoPath int64 `json:"no_path"`
}

// Total adds up the stages.
func (l Lost) Total() int64 { return l.Block + l.Request + l.Unconfirmed + l.NoPath }

// EventStats is a count of receive times and their sum.
type EventStats struct {
	Count int64 `json:"count"`
	SumNs int64 `json:"sum_ns"`
}

// PingStats are the round trips of one ping size to one target.
type PingStats struct {
	Count   int64   `json:"count"`
	Lost    int64   `json:"lost"`
	SumNs   int64   `json:"sum_ns"`
	SumSqNs float64 `json:"sum_sq_ns"` // sum of squares, ns^2
	MinNs   int64   `json:"min_ns"`
	MaxNs   int64   `json:"max_ns"`
	P50Ns   int64   `json:"p50_ns"`
}

func (p *PingStats) add(d time.Duration) {
	ns := d.Nanoseconds()
	if p.Count == 0 || ns < p.MinNs {
		p.MinNs = ns
	}
	p.MaxNs = max(p.MaxNs, ns)
	p.Count++
	p.SumNs += ns
	p.SumSqNs += float64(ns) * float64(ns)
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowest, histHighest, histDigits) }

func encodeHist(h *hdrhistogram.Histogram) string {
	if h.TotalCount() == 0 {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// histograms are the node's receive-time histograms by hops, decoded (nil
// for none): those Validate decoded, so that a collected result is decoded
// once; a result Build gets without Validate (a test's) is decoded here,
// and what does not decode is none.
func (nr *NodeRun) histograms() [2]*hdrhistogram.Histogram {
	if nr.validated {
		return nr.hists
	}
	var h [2]*hdrhistogram.Histogram
	for k, enc := range nr.Hist {
		if enc == "" {
			continue
		}
		if d, err := hdrhistogram.Decode([]byte(enc)); err == nil {
			h[k] = d
		}
	}
	return h
}

func summary(h *hdrhistogram.Histogram) *latency.Summary {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	s := latency.FromHistogram(h, 1)
	return &s
}
