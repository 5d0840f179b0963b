package gc

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/wire"
)

// ErrResult is wrapped when a node's result does not fit its run: an index
// out of range, a size or count that cannot be, a histogram of another
// shape. The agent that sent it is not the one the run set up (another
// version) or is broken; nothing it says is used.
var ErrResult = errors.New("bad result")

// The receive-time histograms' shape (newHist): 1 ns to 2 minutes at 3
// significant digits. A histogram of any other shape is refused before it
// is decoded, so that decoding never allocates a size the wire chose.
const (
	histLowest  = 1
	histHighest = int64(2 * time.Minute)
	histDigits  = 3
)

// maxMTU bounds a node's reported MTU (loopback's is 65536).
const maxMTU = 1 << 20

// maxCount bounds every count and sum of ns in a result: 2^53 ns is 104
// days of waits added up (an hour's run of 16 nodes with 1024 requests in
// flight each adds up to about 40), and sums of 2^9 of them cannot
// overflow.
const maxCount = 1 << 53

// Validate checks node self's result (the agent's answer to gc.result) of
// a run of n nodes with spec before Build trusts it: its index, every
// slice's size, every node index it names, every count (none negative;
// blocks received as many as receive times recorded; blocks served as
// many as their datagrams make), its histograms (their shape and their
// counts). The error wraps ErrResult and names the first problem. A valid
// result keeps its histograms decoded for Build.
func (nr *NodeRun) Validate(self, n int, spec Spec) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrResult, fmt.Sprintf(format, a...))
	}
	nr.hists, nr.validated = [2]*hdrhistogram.Histogram{}, false // until it passes again
	switch {
	case nr.Index != self:
		return bad("it says it is node %d, it was set up as node %d", nr.Index, self)
	case len(nr.From) != n, len(nr.Routed) != n, len(nr.Served) != n, len(nr.Pings) != n:
		return bad("per-node figures for %d, %d, %d and %d nodes (from, routed, served, pings), the run has %d",
			len(nr.From), len(nr.Routed), len(nr.Served), len(nr.Pings), n)
	case nr.MTU < 0 || nr.MTU > maxMTU:
		return bad("an MTU of %d bytes", nr.MTU)
	}
	if err := nr.checkUnproven(self, n); err != nil {
		return bad("%v", err)
	}
	if err := nr.checkCounts(); err != nil {
		return bad("%v", err)
	}
	hists, err := nr.checkConsistent(spec)
	if err != nil {
		return bad("%v", err)
	}
	nr.hists, nr.validated = hists, true
	return nil
}

func (nr *NodeRun) checkUnproven(self, n int) error {
	seen := make([]bool, n)
	for _, p := range nr.Unproven {
		switch {
		case p < 0 || p >= n:
			return fmt.Errorf("unproven peer %d: the run's nodes are 0 to %d", p, n-1)
		case p == self:
			return fmt.Errorf("unproven peer %d is the node itself", p)
		case seen[p]:
			return fmt.Errorf("unproven peer %d named twice", p)
		}
		seen[p] = true
	}
	return nil
}

// count is a named count, for checkCounts.
type count struct {
	name string
	n    int64
}

// checkCounts finds a negative count.
func (nr *NodeRun) checkCounts() error {
	v := []count{{"issue time", nr.IssueNs}, {"requests", nr.Requests}, {"local cr hits", nr.Local[0]}, {"local current hits", nr.Local[1]},
		{"lost cr", nr.LostByMode[0]}, {"lost current", nr.LostByMode[1]}, {"other packets", nr.OtherPackets},
		{"blocks served", nr.BlocksServed}, {"datagrams served", nr.ChunksServed}, {"datagrams sent", nr.DatagramsOut}, {"dropped", nr.Dropped}, {"truncated", nr.Truncated}, {"rate wait", nr.RateWaitedNs},
		{"user cpu", nr.CPU.UserNs}, {"system cpu", nr.CPU.SystemNs}, {"softirq", nr.CPU.SoftIRQNs}}
	add := func(name string, n int64) { v = append(v, count{name, n}) }
	for s, f := range nr.From {
		for _, c := range []int64{f.Received, f.Late, f.Lost.Block, f.Lost.Request, f.Lost.Unconfirmed, f.Lost.NoPath} {
			add(fmt.Sprintf("from node %d", s), c)
		}
		for _, l := range []*latency.Summary{f.TwoWay, f.ThreeWay} {
			if l != nil {
				for _, c := range []int64{l.Count, l.Min, l.P50, l.P90, l.P99, l.P999, l.Max} {
					add(fmt.Sprintf("receive times from node %d", s), c)
				}
			}
		}
	}
	for r := range nr.Routed {
		if len(nr.Routed[r]) != len(nr.Routed) {
			return fmt.Errorf("routed: %d servers for requester %d of %d nodes", len(nr.Routed[r]), r, len(nr.Routed))
		}
		for _, c := range nr.Routed[r] {
			add(fmt.Sprintf("routed for node %d", r), c)
		}
		add(fmt.Sprintf("served to node %d", r), nr.Served[r][0])
		add(fmt.Sprintf("served to node %d", r), nr.Served[r][1])
	}
	for t, p := range nr.Pings {
		for _, s := range p {
			for _, c := range []int64{s.Count, s.Lost, s.SumNs, s.MinNs, s.MaxNs, s.P50Ns} {
				add(fmt.Sprintf("pings to node %d", t), c)
			}
			if !(s.SumSqNs >= 0 && s.SumSqNs <= math.MaxFloat64) {
				return fmt.Errorf("pings to node %d: a sum of squares of %g", t, s.SumSqNs)
			}
		}
	}
	for _, e := range nr.Events {
		for _, c := range []int64{e[0].Count, e[0].SumNs, e[1].Count, e[1].SumNs} {
			add("wait events", c)
		}
	}
	for _, c := range v {
		if c.n < 0 || c.n > maxCount {
			return fmt.Errorf("%s: %d, a count out of range (0 to 2^53)", c.name, c.n)
		}
	}
	return nil
}

// checkConsistent holds the counts against each other: each block received
// is one receive time (in the events, the histograms and the server's
// summaries); each block served one count per requester and hops, and its
// datagrams; a block lost is settled at most once. It returns the
// histograms it decoded to count them (nil for none).
func (nr *NodeRun) checkConsistent(spec Spec) ([2]*hdrhistogram.Histogram, error) {
	var hists [2]*hdrhistogram.Histogram
	var received, settled, served int64
	for s, f := range nr.From {
		received += f.Received
		settled += f.Lost.Total()
		var timed int64
		for _, l := range []*latency.Summary{f.TwoWay, f.ThreeWay} {
			if l != nil {
				timed += l.Count
			}
		}
		if timed != f.Received {
			return hists, fmt.Errorf("from node %d: %d blocks received, %d receive times", s, f.Received, timed)
		}
	}
	for h := range nr.Hist {
		events := nr.Events[0][h].Count + nr.Events[1][h].Count
		hist, err := decodeHist(nr.Hist[h])
		if err != nil {
			return hists, fmt.Errorf("%d-way receive times: %w", h+2, err)
		}
		var count int64
		if hist != nil {
			count = hist.TotalCount()
		}
		if count != events {
			return hists, fmt.Errorf("%d-way receive times: %d in the histogram, %d in the wait events", h+2, count, events)
		}
		hists[h] = hist
		received -= events
	}
	if received != 0 {
		return hists, fmt.Errorf("blocks received and wait events differ by %d", received)
	}
	if lost := nr.LostByMode[0] + nr.LostByMode[1]; settled > lost {
		return hists, fmt.Errorf("%d lost blocks settled, %d lost", settled, lost)
	}
	for _, s := range nr.Served {
		served += s[0] + s[1]
	}
	if served != nr.BlocksServed {
		return hists, fmt.Errorf("%d blocks served, %d by requester", nr.BlocksServed, served)
	}
	if per := int64(len(Chunks(spec.Block))); nr.ChunksServed != nr.BlocksServed*per {
		return hists, fmt.Errorf("%d blocks served in %d datagrams, a block is %d", nr.BlocksServed, nr.ChunksServed, per)
	}
	return hists, nil
}

// decodeHist checks an encoded receive-time histogram (encodeHist) and
// returns it decoded (nil for none): its size bounded, its header read
// (inflating no more than the header) and its shape that of newHist before
// it is decoded.
func decodeHist(enc string) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		return nil, nil
	}
	if len(enc) > wire.MaxPayload {
		return nil, fmt.Errorf("a histogram of %d bytes: larger than an agent's answer", len(enc))
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return nil, errors.New("not a compressed HDR histogram")
	}
	size := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if size < 0 || size > int64(len(raw)-8) {
		return nil, fmt.Errorf("histogram says it holds %d bytes, it holds %d", size, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+size]))
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	var hdr [40]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil {
		return nil, fmt.Errorf("histogram header: %w", err)
	}
	cookie := int32(binary.BigEndian.Uint32(hdr[0:]))
	digits := int32(binary.BigEndian.Uint32(hdr[12:]))
	lowest, highest := int64(binary.BigEndian.Uint64(hdr[16:])), int64(binary.BigEndian.Uint64(hdr[24:]))
	if cookie&^0xf0 != hdrhistogram.V2EncodingCookieBase || digits != histDigits || lowest != histLowest || highest != histHighest {
		return nil, fmt.Errorf("a histogram of %d to %d at %d digits, want %d to %d at %d", lowest, highest, digits, histLowest, histHighest, histDigits)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return h, nil
}
