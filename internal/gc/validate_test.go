package gc

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/wire"
)

// loopbackRuns are three nodes' results of a real run on loopback
// (engines on their sockets, as an agent runs them; captured with
// startNode and node.Stop: 300 ms, 200 blocks, 30 % current, pings).
func loopbackRuns(t testing.TB) (Spec, []*NodeRun) {
	t.Helper()
	b, err := os.ReadFile("testdata/noderuns-loopback-3.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Spec Spec       `json:"spec"`
		Runs []*NodeRun `json:"runs"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Spec, f.Runs
}

func TestValidateRealResults(t *testing.T) {
	spec, runs := loopbackRuns(t)
	for i, nr := range runs {
		if err := nr.Validate(i, len(runs), spec); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
	// The same results as node 1 of 3, or of a run of 4, do not fit.
	if err := runs[0].Validate(1, 3, spec); !errors.Is(err, ErrResult) {
		t.Errorf("node 0's result as node 1's: %v", err)
	}
	if err := runs[0].Validate(0, 4, spec); !errors.Is(err, ErrResult) {
		t.Errorf("a result of 3 nodes in a run of 4: %v", err)
	}
}

// TestValidateDecodesOnce: a valid result keeps the histograms Validate
// decoded, and Build's report of validated results is the report of the
// same results decoded by Build itself; a result that then fails Validate
// keeps nothing.
func TestValidateDecodesOnce(t *testing.T) {
	spec, runs := loopbackRuns(t)
	_, fresh := loopbackRuns(t)
	for i, nr := range runs {
		if err := nr.Validate(i, len(runs), spec); err != nil {
			t.Fatal(err)
		}
		h := nr.histograms()
		if h[0] == nil || h[0] != nr.histograms()[0] || h[0].TotalCount() != nr.Events[0][0].Count+nr.Events[1][0].Count {
			t.Errorf("node %d: 2-way histogram %p then %p: not the one Validate decoded", i, h[0], nr.histograms()[0])
		}
		if f := fresh[i].histograms(); f[0] == fresh[i].histograms()[0] {
			t.Errorf("node %d: an unvalidated result's histograms are cached", i)
		}
	}
	named := []Named{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	start := time.Unix(0, 0)
	a, err := json.Marshal(Build(spec, start, named, runs, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(Build(spec, start, named, fresh, nil))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("the report of validated results differs:\n%s\n%s", a, b)
	}
	if err := runs[0].Validate(1, 3, spec); err == nil || runs[0].validated {
		t.Errorf("a result that failed Validate (%v) still counts as validated", err)
	}
}

// wideHist is a histogram whose header asks for a counts array far larger
// than a receive-time histogram's (1 ns to 2^62 ns at 4 digits: 6 MiB).
func wideHist(t testing.TB) string {
	t.Helper()
	h := hdrhistogram.New(1, 1<<62, 4)
	h.RecordValue(1000)
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each way a result can fail its run is refused with ErrResult and a
// message naming the problem.
func TestValidateRefuses(t *testing.T) {
	spec, _ := loopbackRuns(t)
	wide := wideHist(t)
	raw, _ := base64.StdEncoding.DecodeString(func() string { _, r := loopbackRuns(t); return r[0].Hist[0] }())
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw))) // says more than it holds
	long := base64.StdEncoding.EncodeToString(raw)
	oneMore := newHist()
	oneMore.RecordValue(1000)
	for _, c := range []struct {
		name, want string
		mod        func(nr *NodeRun)
	}{
		{"another index", "set up as node 0", func(nr *NodeRun) { nr.Index = 2 }},
		{"from short", "per-node figures", func(nr *NodeRun) { nr.From = nr.From[:2] }},
		{"pings long", "per-node figures", func(nr *NodeRun) { nr.Pings = append(nr.Pings, nr.Pings[0]) }},
		{"routed row short", "routed: 2 servers", func(nr *NodeRun) { nr.Routed[1] = nr.Routed[1][:2] }},
		{"unproven out of range", "unproven peer 7", func(nr *NodeRun) { nr.Unproven = []int{7} }},
		{"unproven negative", "unproven peer -1", func(nr *NodeRun) { nr.Unproven = []int{-1} }},
		{"unproven self", "the node itself", func(nr *NodeRun) { nr.Unproven = []int{0} }},
		{"unproven twice", "named twice", func(nr *NodeRun) { nr.Unproven = []int{1, 1} }},
		{"mtu", "MTU of -1", func(nr *NodeRun) { nr.MTU = -1 }},
		{"negative requests", "requests: -5", func(nr *NodeRun) { nr.Requests = -5 }},
		{"count too large", "requests: 1152921504606846976, a count out of range", func(nr *NodeRun) { nr.Requests = 1 << 60 }},
		{"negative late", "from node 2", func(nr *NodeRun) { nr.From[2].Late = -1 }},
		{"negative ping", "pings to node 1", func(nr *NodeRun) { nr.Pings[1][0].Count = -1 }},
		{"negative routed", "routed for node 1", func(nr *NodeRun) { nr.Routed[1][2] = -1 }},
		{"received without a time", "1709 blocks received, 1708 receive times", func(nr *NodeRun) { nr.From[1].Received++ }},
		{"events without blocks", "2-way receive times", func(nr *NodeRun) { nr.Events[0][0].Count++ }},
		{"histogram count", "2-way receive times", func(nr *NodeRun) { nr.Hist[0] = encodeHist(oneMore) }},
		{"histogram of another shape", "a histogram of 1 to 4611686018427387904 at 4 digits", func(nr *NodeRun) { nr.Hist[1] = wide }},
		{"histogram not base64", "histogram: illegal base64", func(nr *NodeRun) { nr.Hist[0] = "%%%" }},
		{"histogram not hdr", "not a compressed HDR histogram", func(nr *NodeRun) { nr.Hist[0] = base64.StdEncoding.EncodeToString([]byte("0123456789")) }},
		{"histogram longer than it is", "histogram says it holds", func(nr *NodeRun) { nr.Hist[0] = long }},
		{"histogram larger than a frame", "larger than an agent's answer", func(nr *NodeRun) { nr.Hist[0] = strings.Repeat("A", 1<<20) }},
		{"served by requester", "blocks served", func(nr *NodeRun) { nr.BlocksServed++ }},
		{"served datagrams", "datagrams, a block is 1", func(nr *NodeRun) { nr.ChunksServed++ }},
		{"settled more than lost", "lost blocks settled", func(nr *NodeRun) { nr.From[1].Lost.Block = 3 }},
	} {
		_, runs := loopbackRuns(t)
		nr := runs[0]
		c.mod(nr)
		err := nr.Validate(0, 3, spec)
		if !errors.Is(err, ErrResult) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A histogram's header is read before it is decoded: one that asks for a
// large counts array is refused without allocating it.
func TestValidateHistogramNotAllocated(t *testing.T) {
	wide := wideHist(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := decodeHist(wide)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a histogram of another shape was accepted")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
		t.Errorf("refusing it allocated %d bytes", got)
	}
	// Decoding it whole would have taken megabytes: the check is not vacuous.
	runtime.ReadMemStats(&before)
	if _, err := hdrhistogram.Decode([]byte(wide)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got < 1<<20 {
		t.Errorf("decoding the wide histogram took only %d bytes", got)
	}
}

// A result with no blocks at all (a node that only served, or a run cut
// at once) is valid, and a receive time up to the histogram's top fits.
func TestValidateEdges(t *testing.T) {
	spec, _ := Spec{Duration: time.Second}.Normalize()
	nr := &NodeRun{Index: 1, From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}}, Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2)}
	if err := nr.Validate(1, 2, spec); err != nil {
		t.Errorf("empty result: %v", err)
	}
	h := newHist()
	h.RecordValue(histHighest)
	nr.Hist[1] = encodeHist(h)
	nr.Events[1][1] = EventStats{Count: 1, SumNs: histHighest}
	s := summary(h)
	nr.From[0] = FromStats{Received: 1, ThreeWay: s}
	if err := nr.Validate(1, 2, spec); err != nil {
		t.Errorf("one block at the top: %v", err)
	}
}

// A block whose receive time is above the histograms' top (a node stopped
// for minutes) is still counted in them at the top: its node's result
// stays valid.
func TestBlockAboveHistogramTop(t *testing.T) {
	s := fuzzSim(t)
	e := s.es[0]
	i := slices.IndexFunc(e.slots, func(sl slot) bool { return sl.busy && !sl.lost && sl.to == 1 })
	if i < 0 {
		t.Fatal("no request to node 1 in flight")
	}
	sl := &e.slots[i]
	sl.sent = s.now.Add(-3 * time.Minute)
	m := msg{Type: msgBlock, Hops: 2, Requester: 0, Server: 1, Chunks: 1, Block: sl.block, ID: sl.id}
	if sl.current {
		m.Flags = flagCurrent
	}
	pkt := make([]byte, e.chunks[0])
	m.put(pkt[wire.HeaderLen:])
	if _, err := s.es[1].peers[0].Seal.SealPacket(pkt, dataKind, 0); err != nil {
		t.Fatal(err)
	}
	received := e.res.From[1].Received
	e.receive(pkt, s.addr[1], s.now)
	if e.res.From[1].Received != received+1 {
		t.Fatalf("the slow block was not received (dropped %d)", e.res.Dropped)
	}
	e.res.IssueNs = s.now.Sub(e.issueStart).Nanoseconds()
	nr := e.finish()
	if err := nr.Validate(0, 2, e.spec); err != nil {
		t.Error(err)
	}
	if max := nr.From[1].TwoWay.Max; max < histHighest*999/1000 {
		t.Errorf("the slowest receive time is %v", time.Duration(max))
	}
}
