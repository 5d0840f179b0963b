package report

import (
	"fmt"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// splitSection adds each blocks flow's round trip split into its parts:
// the wake-up verdict first, the parts' percentiles, how far they account
// for the round trip, and what the stamps cannot see (as in the text).
func splitSection(s *section, flows []traffic.Flow) {
	for _, f := range flows {
		sm := f.Summary
		sp := sm.Split
		if sp == nil {
			continue
		}
		s.heading(fmt.Sprintf("Round trip split (%s)", f.Direction))
		if sm.RTT != nil {
			if v := sp.WakeVerdict(sm.RTT.P50); v != "" {
				s.para("Verdict: %s.", v)
			}
		}
		t := &table{Head: []string{"part", "p50", "p90", "p99", "max"}}
		for _, p := range sp.Parts() {
			r := []cell{{Text: p.Name}}
			if p.L == nil {
				for range 4 {
					r = append(r, cell{Text: units.NotAvailable, Class: "num"})
				}
			} else {
				for _, v := range []int64{p.L.P50, p.L.P90, p.L.P99, p.L.Max} {
					r = append(r, cell{Text: usText(float64(v)), Class: "num"})
				}
			}
			t.Rows = append(t.Rows, r)
		}
		if p := sm.RTT; p != nil {
			t.Rows = append(t.Rows, []cell{{Text: "round trip"}, {Text: usText(float64(p.P50)), Class: "num"},
				{Text: usText(float64(p.P90)), Class: "num"}, {Text: usText(float64(p.P99)), Class: "num"}, {Text: usText(float64(p.Max)), Class: "num"}})
			if l := sp.AccountedLine(p.P50); l != "" {
				s.note("%s.", l)
			}
		}
		s.table(t)
		for _, m := range sp.Missing {
			s.note("n/a: %s.", m)
		}
		s.note("What a stamp cannot see: %s.", sp.StampNote())
		if n := sp.IdleNote(); n != "" {
			s.note("%s.", n)
		}
	}
}

// gcSplitSection adds every pair's receive times split into their parts
// (p50s), as the text has them; nothing when no pair was split.
func gcSplitSection(s *section, r *gc.Report) {
	t := &table{Head: []string{"requester", "server", "hops", "receive p50", "requester wake-up", "server wake-up", "server work", "network and stacks", "accounted"}}
	var last *traffic.Split
	for _, e := range r.SplitRows() {
		last = e.Split
		r := []cell{{Text: e.Requester}, {Text: e.Server}, {Text: e.Hops}, {Text: usText(float64(e.RTT.P50)), Class: "num"}}
		for _, part := range e.Split.Parts() {
			v := units.NotAvailable
			if part.L != nil {
				v = usText(float64(part.L.P50))
			}
			r = append(r, cell{Text: v, Class: "num"})
		}
		acc := units.NotAvailable
		if e.Split.AccountedPercent != nil {
			acc = units.FormatPercent(*e.Split.AccountedPercent, 0) + " %"
		}
		t.Rows = append(t.Rows, append(r, cell{Text: acc, Class: "num"}))
	}
	if last == nil {
		return
	}
	s.heading("Receive times split into their parts (p50)")
	s.table(t)
	s.note("The server's parts are the master's and the holder's added on a 3-way trip. What a stamp cannot see: %s.", last.StampNote())
}
