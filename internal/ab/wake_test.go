package ab

import (
	"bytes"
	"strings"
	"testing"
)

// TestWakeNote: a blocks run's split gives each run the wake-ups' share of
// the round trip; when it dominates an arm and the question is a network
// figure, the verdict has a note beside it; a CPU question has none, nor
// has an arm where the wake-ups are a small part.
func TestWakeNote(t *testing.T) {
	doc := `{"schema":"interlink.bench/v1","flows":[{"summary":{"messages_per_sec":11000,"split":{"wake_share":0.84,"wake_dominant":true}}}]}`
	if v, dom := wakeShare(ParseJSON([]byte(doc))); v == nil || *v != 0.84 || !dom {
		t.Fatalf("wake share %v, dominant %v", v, dom)
	}
	gcDoc := `{"schema":"interlink.gc/v1","pairs":[{"two_way_split":{"wake_share":0.7,"wake_dominant":true}},{"two_way_split":{"wake_share":0.55}},{}]}`
	if v, dom := wakeShare(ParseJSON([]byte(gcDoc))); v == nil || *v != 0.55 || dom {
		t.Errorf("gc: the least pair's share and its verdict, got %v %v", v, dom)
	}
	if v, _ := wakeShare(ParseJSON([]byte(`{"flows":[{"summary":{}}]}`))); v != nil {
		t.Errorf("no split, share %v", *v)
	}
	build := func(metric string, a, b float64, dominant bool) *Result {
		m, _ := ParseMetric(metric)
		s := Spec{A: Arm{Name: "A"}, B: Arm{Name: "B"}, Runs: 4, Metrics: []Metric{m}}
		s.defaults()
		r := newResult(s)
		for i, slot := range Schedule(OrderABBA, 4, 0, 0) {
			share := []float64{a, b}[slot.Arm]
			r.Runs = append(r.Runs, Run{Index: i, Arm: []string{"A", "B"}[slot.Arm], WakeShare: &share, WakeDominant: dominant && share >= WakeDominates,
				Metrics: map[string]float64{m.Name: 11000 + float64(i%3)*100}})
		}
		r.finish()
		return r
	}
	r := build("blocks_per_sec", 0.84, 0.2, true)
	if r.Wakes == nil || r.Wakes.Share[0] == nil || *r.Wakes.Share[0] != 0.84 || !strings.Contains(r.Wakes.Note, "mostly the two hosts waking up (median share of its p50: A 84 %)") {
		t.Fatalf("wakes %+v", r.Wakes)
	}
	var b bytes.Buffer
	WriteText(&b, r)
	if !strings.Contains(b.String(), "  blocks_per_sec (higher is better): ") || !strings.Contains(b.String(), "\n  NOTE: the round trip is mostly the two hosts waking up") {
		t.Errorf("text:\n%s", b.String())
	}
	if r := build("cpu_per_message_client", 0.84, 0.9, true); r.Wakes.Note != "" {
		t.Errorf("a CPU question, note %q", r.Wakes.Note)
	}
	if r := build("rtt_p50", 0.3, 0.2, true); r.Wakes.Note != "" {
		t.Errorf("small wake-ups, note %q", r.Wakes.Note)
	}
	// Most of the round trip, but the CPUs never slept (a PM QoS hold):
	// no idle setting is to blame, no note.
	if r := build("blocks_per_sec", 0.63, 0.65, false); r.Wakes.Note != "" {
		t.Errorf("CPUs kept awake, note %q", r.Wakes.Note)
	}
}
