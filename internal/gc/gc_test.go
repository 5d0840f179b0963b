package gc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/mesh"
)

func TestMsgRoundTrip(t *testing.T) {
	in := msg{Type: msgBlock, Flags: flagCurrent, Hops: 3, Requester: 2, Server: 7, Chunk: 16, Chunks: 17, Block: 1<<20 - 1, ID: 5<<slotBits | 1023, Stamp: -42}
	b := make([]byte, msgLen)
	in.put(b)
	var out msg
	if err := out.parse(b); err != nil || out != in {
		t.Fatalf("round trip: %+v %v, want %+v", out, err, in)
	}
	if slotOf(out.ID) != 1023 || genOf(out.ID) != 5 {
		t.Errorf("id %x: slot %d gen %d", out.ID, slotOf(out.ID), genOf(out.ID))
	}
	for _, bad := range []msg{{Type: 0}, {Type: msgMax + 1}, {Type: msgBlock, Chunk: 1, Chunks: 1}, {Type: msgBlock}} {
		bad.put(b)
		if err := out.parse(b); err == nil {
			t.Errorf("%+v parsed", bad)
		}
	}
	if err := out.parse(b[:msgLen-1]); err == nil {
		t.Error("short header parsed")
	}
}

func TestSpec(t *testing.T) {
	s, err := Spec{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if s.Block != 8192 || s.Request != 256 || s.Blocks != DefaultBlocks || s.CurrentShare != DefaultCurrentShare || s.Outstanding != DefaultOutstanding {
		t.Errorf("defaults: %+v", s)
	}
	if s, _ := (Spec{CurrentSet: true}).Normalize(); s.CurrentShare != 0 {
		t.Errorf("an explicit current share of 0 became %g", s.CurrentShare)
	}
	for _, bad := range []Spec{
		{Block: MaxBlock + 1}, {Block: HeaderLen - 1}, {Request: MaxChunk + 1}, {Request: 10}, {Skew: -1}, {Skew: math.NaN()},
		{CurrentShare: 1.5}, {Outstanding: MaxOutstanding + 1}, {Blocks: MaxBlocks + 1}, {Timeout: time.Hour}, {Duration: -1},
		{PingInterval: time.Millisecond},
	} {
		if _, err := bad.Normalize(); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func TestChunks(t *testing.T) {
	for _, c := range []struct{ block, n int }{{8192, 1}, {MaxChunk, 1}, {MaxChunk + 1, 2}, {MaxBlock, 17}} {
		sizes := Chunks(c.block)
		sum := 0
		for _, s := range sizes {
			sum += s
			if s > MaxChunk || s < HeaderLen {
				t.Errorf("block %d: chunk of %d bytes", c.block, s)
			}
		}
		if len(sizes) != c.n || sum != c.block {
			t.Errorf("block %d: %d chunks of %d bytes in all, want %d", c.block, len(sizes), sum, c.n)
		}
	}
}

// Blocks are spread over the masters, within a few percent at 100,000.
func TestMasterSpread(t *testing.T) {
	for _, n := range []int{2, 3, 7, 16} {
		count := make([]int, n)
		const blocks = 100000
		for b := uint32(0); b < blocks; b++ {
			count[masterOf(b, n)]++
		}
		for m, c := range count {
			if want := blocks / n; math.Abs(float64(c-want)) > 0.05*float64(want) {
				t.Errorf("%d nodes: node %d masters %d blocks, want about %d", n, m, c, want)
			}
		}
	}
}

// Uniform asks every block alike; zipf 1 asks block k about 1/k as often
// as block 0; the current share holds.
func TestPicker(t *testing.T) {
	const draws = 200000
	for _, skew := range []float64{0, 1} {
		p := newPicker(Spec{Blocks: 100, Skew: skew, CurrentShare: 0.25}, 7)
		var count [100]int
		cur := 0
		for range draws {
			b, c := p.next()
			count[b]++
			if c {
				cur++
			}
		}
		if math.Abs(float64(cur)/draws-0.25) > 0.01 {
			t.Errorf("skew %g: %d of %d current", skew, cur, draws)
		}
		h := 0.0
		for k := 1; k <= 100; k++ {
			h += 1 / float64(k)
		}
		for _, k := range []int{0, 1, 9, 99} {
			want := float64(draws) / 100
			if skew == 1 {
				want = float64(draws) / float64(k+1) / h
			}
			if math.Abs(float64(count[k])-want) > 0.1*want {
				t.Errorf("skew %g: block %d drawn %d times, want about %.0f", skew, k, count[k], want)
			}
		}
	}
}

// Every pair holds exactly one session, and no node dials more than half
// of the others (rounded up).
func TestDialPlan(t *testing.T) {
	for n := 2; n <= MaxNodes; n++ {
		seen := map[[2]int]int{}
		for i, js := range DialPlan(n) {
			if len(js) > n/2 {
				t.Errorf("%d nodes: node %d dials %d", n, i, len(js))
			}
			for _, j := range js {
				seen[[2]int{min(i, j), max(i, j)}]++
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Errorf("%d nodes: %d pairs connected", n, len(seen))
		}
		for p, c := range seen {
			if c != 1 {
				t.Errorf("%d nodes: pair %v dialled %d times", n, p, c)
			}
		}
	}
}

// Build: the pair figures come from the requester (received, lost) and the
// masters (requested); a loss over MaxLossPercent fails the run, a smaller
// one warns, an imbalance warns.
func TestBuildVerdicts(t *testing.T) {
	mk := func(lost int64, routed int64) []*NodeRun {
		runs := make([]*NodeRun, 2)
		for i := range runs {
			runs[i] = &NodeRun{Index: i, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
				Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2)}
		}
		runs[0].From[1] = FromStats{Received: 1000, Lost: Lost{Block: lost}}
		runs[1].Routed[0][1] = routed
		runs[1].From[0] = FromStats{Received: 10}
		runs[0].Routed[1][0] = 10
		return runs
	}
	names := []Named{{Name: "a"}, {Name: "b"}}
	for _, c := range []struct {
		lost, routed int64
		verdict      string
	}{{0, 1000, VerdictOK}, {5, 1005, VerdictWarning}, {50, 1050, VerdictFailed}, {0, 1001, VerdictWarning}} {
		r := Build(Spec{Timeout: time.Second}, time.Now(), names, mk(c.lost, c.routed), nil)
		p := pairOf(r, "a", "b")
		if r.Verdict != c.verdict || p.Requested != c.routed || p.Balanced != (c.routed == 1000+c.lost) {
			t.Errorf("lost %d of %d routed: verdict %s, %+v, problems %+v", c.lost, c.routed, r.Verdict, p, r.Problems)
		}
		if r.Total.BlocksPerSec != float64(1010) {
			t.Errorf("blocks/s %g", r.Total.BlocksPerSec)
		}
	}
}

func TestPingFigures(t *testing.T) {
	var s PingStats
	for _, ms := range []int{1, 2, 3, 4} {
		s.add(time.Duration(ms) * time.Millisecond)
	}
	p := pingFigures(s)
	if p.Count != 4 || p.AvgNs != 2.5e6 || math.Abs(p.StddevNs-math.Sqrt(1.25)*1e6) > 1 || p.MinNs != 1e6 || p.MaxNs != 4e6 {
		t.Errorf("%+v", p)
	}
}

// A node whose result was lost routed requests nobody counts: the others'
// pairs are not judged on balance, the node is named, the run fails.
func TestBuildResultLost(t *testing.T) {
	runs := make([]*NodeRun, 3)
	for i := range 2 {
		runs[i] = &NodeRun{Index: i, IssueNs: int64(time.Second), From: make([]FromStats, 3), Routed: [][]int64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
			Served: make([][2]int64, 3), Pings: make([][2]PingStats, 3)}
	}
	runs[0].From[1] = FromStats{Received: 1000} // half of it routed by c
	runs[1].Routed[0][1] = 500
	names := []Named{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	lost := []mesh.Unreachable{{Node: "c", Cause: "connection closed during the run (the agent stopped?)", During: true}}
	r := Build(Spec{Timeout: time.Second}, time.Now(), names, runs, lost)
	var kinds []string
	for _, p := range r.Problems {
		kinds = append(kinds, p.Problem+": "+p.Detail)
	}
	if r.Verdict != VerdictFailed || len(r.Problems) != 1 || r.Problems[0].Problem != ProblemNodeError || !strings.Contains(r.Problems[0].Detail, "c: no result collected") {
		t.Errorf("verdict %s, problems %v", r.Verdict, kinds)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "requested counts leave out the requests that c routed as masters (results lost)") {
		t.Errorf("text:\n%s", b.String())
	}
	// Without the loss said, the same pairs are judged unbalanced.
	r = Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil)
	unbalanced := false
	for _, p := range r.Problems {
		unbalanced = unbalanced || p.Problem == ProblemAccounting
	}
	if !unbalanced {
		t.Errorf("unbalanced pairs not warned about: %+v", r.Problems)
	}
}
