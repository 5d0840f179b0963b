package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/gc"
)

// A gc run over the blackhole: one heatmap per figure, a titled cell for
// every pair that has the figure, the lost blocks marked, AWR's two tables.
func TestHTMLGC(t *testing.T) {
	r := fixture(t, "lab-gc.json").(*gc.Report)
	page := render(t, r)
	for _, c := range []string{"gc-rate", "gc-2way", "gc-3way", "gc-lost"} {
		want := 1
		if c == "gc-3way" && r.Total.ThreeWay == nil {
			want = 0 // none arrived: a note says so
		}
		if n := count(page, `class="chart heatmap `+c+`"`); n != want {
			t.Errorf("%d %s heatmaps, want %d", n, c, want)
		}
	}
	// Rate and lost: every pair; 2-way: the pairs that received blocks.
	withTwo := 0
	for _, p := range r.Pairs {
		if p.TwoWay != nil {
			withTwo++
		}
	}
	if n, want := count(page, `<title>node\d &lt;- node\d: `), 2*len(r.Pairs)+withTwo; n != want {
		t.Errorf("%d titled cells, want %d", n, want)
	}
	where := fmt.Sprintf("nothing seen %d, receive buffer 0", r.Nodes[0].LostWhere.NothingSeen)
	for _, want := range []string{"Interconnect Ping Latency Stats", "gc cr block lost", `class="num critical"`, "badge critical", where} {
		if !strings.Contains(page, want) {
			t.Errorf("the gc report lacks %q", want)
		}
	}
}

// TestHTMLGCFiguresNotAvailable: a node whose kernel's counters could not
// give its packets or fragments per block (absent in the JSON, n/a in the
// text report) is n/a in the HTML too, and so is the total, not "0.00".
func TestHTMLGCFiguresNotAvailable(t *testing.T) {
	r := fixture(t, "lab-gc.json").(*gc.Report)
	r.Total.FragmentsPerBlock = 0
	r.Nodes[0].FragmentsPerBlock, r.Nodes[0].PacketsPerBlock = 0, 0
	page := render(t, r)
	if !strings.Contains(page, "n/a IP packets per block shipped") {
		t.Error("the total's packets per block are not n/a")
	}
	if strings.Contains(page, ">0.00<") || count(page, `<td class="num">n/a</td>`) < 2 {
		t.Error("the node's fragments and packets per block are not n/a")
	}
}
