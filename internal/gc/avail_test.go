package gc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/traffic"
)

// A node whose kernel lacks Udp RcvbufErrors (one of the counters that
// place a lost block and give packets per block) has neither figure:
// no lost-where line, fragments and packets per block absent in JSON and
// "n/a" in text, never 0.
func TestBuildCountersNotAvailable(t *testing.T) {
	runs := make([]*NodeRun, 2)
	for i := range runs {
		runs[i] = &NodeRun{Index: i, MTU: 1500, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
			Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2), BlocksServed: 100,
			Counters: traffic.Counters{UDPOutDatagrams: 120, NotAvailable: []string{"udp_out_datagrams"}}}
	}
	runs[0].From[1] = FromStats{Received: 100, Lost: Lost{Block: 3}}
	runs[1].Routed[0][1] = 103
	runs[1].From[0] = FromStats{Received: 100}
	runs[0].Routed[1][0] = 100
	r := Build(Spec{Timeout: time.Second}, time.Now(), []Named{{Name: "a"}, {Name: "b"}}, runs, nil)
	for _, n := range r.Nodes {
		if n.PacketsPerBlock != 0 || n.FragmentsPerBlock != 0 {
			t.Errorf("node %s: %.2f packets, %.2f fragments per block from an absent counter", n.Name, n.PacketsPerBlock, n.FragmentsPerBlock)
		}
	}
	if r.Total.PacketsPerBlock != 0 || r.Total.FragmentsPerBlock != 0 {
		t.Errorf("total: %.2f packets, %.2f fragments per block", r.Total.PacketsPerBlock, r.Total.FragmentsPerBlock)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), `"packets_per_block"`) || strings.Contains(string(b), `"fragments_per_block"`) {
		t.Errorf("json holds per-block packets: %s", b)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !strings.Contains(text.String(), "n/a fragments per block shipped, n/a packets sent per block") {
		t.Errorf("text:\n%s", text.String())
	}
	// With the counter, the same run has both figures.
	for _, nr := range runs {
		nr.Counters.NotAvailable = nil
	}
	r = Build(Spec{Timeout: time.Second}, time.Now(), []Named{{Name: "a"}, {Name: "b"}}, runs, nil)
	if r.Total.PacketsPerBlock == 0 || r.Total.FragmentsPerBlock == 0 {
		t.Errorf("with the counters: %.2f packets, %.2f fragments per block", r.Total.PacketsPerBlock, r.Total.FragmentsPerBlock)
	}
}
