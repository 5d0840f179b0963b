package gc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A target no ping came back from has no mean, deviation or percentiles:
// absent from the JSON and n/a in the text, not 0.000 ms beside its lost
// count; an event without waits has no average.
func TestPingsNone(t *testing.T) {
	var ok PingStats
	ok.add(2 * time.Millisecond)
	rows := []PingRow{{Node: "a", Target: "b", Small: pingFigures(PingStats{Lost: 10}), Large: pingFigures(ok)}}
	js, err := json.Marshal(rows[0])
	if err != nil {
		t.Fatal(err)
	}
	small := string(js[:strings.Index(string(js), `"ping_8k"`)])
	for _, k := range []string{"avg_ns", "stddev_ns", "min_ns", "p50_ns", "max_ns"} {
		if strings.Contains(small, `"`+k+`"`) {
			t.Errorf("no 500 B ping came back, yet %s: %s", k, js)
		}
	}
	if !strings.Contains(small, `"lost":10`) || !strings.Contains(string(js), `"avg_ns":2000000`) {
		t.Errorf("figures lost: %s", js)
	}
	var b strings.Builder
	WritePings(&b, "", rows)
	if f := strings.Fields(strings.Split(b.String(), "\n")[1]); len(f) != 9 || f[3] != "n/a" || f[4] != "n/a" || f[6] != "2.000" {
		t.Errorf("ping row: %q", f)
	}
	if js, _ := json.Marshal(Event{Event: "gc cr block lost"}); strings.Contains(string(js), "avg_ns") {
		t.Errorf("an event without waits has an average: %s", js)
	}
}

// A run without pings (--ping-interval 0) has no ping table: not a row of
// zero counts and n/a per pair of nodes.
func TestBuildNoPings(t *testing.T) {
	runs := make([]*NodeRun, 2)
	for i := range runs {
		runs[i] = &NodeRun{Index: i, IssueNs: int64(time.Second), From: make([]FromStats, 2), Routed: [][]int64{{0, 0}, {0, 0}},
			Served: make([][2]int64, 2), Pings: make([][2]PingStats, 2)}
	}
	names := []Named{{Name: "a"}, {Name: "b"}}
	if r := Build(Spec{Timeout: time.Second}, time.Now(), names, runs, nil); len(r.Pings) != 4 {
		t.Fatalf("with pings: %d rows, want 4", len(r.Pings))
	}
	r := Build(Spec{Timeout: time.Second, NoPing: true}, time.Now(), names, runs, nil)
	js, _ := json.Marshal(r)
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if len(r.Pings) != 0 || strings.Contains(string(js), `"pings"`) || strings.Contains(b.String(), "Ping Latency") {
		t.Errorf("--ping-interval 0: %d rows, JSON %v, text:\n%s", len(r.Pings), strings.Contains(string(js), `"pings"`), b.String())
	}
}
