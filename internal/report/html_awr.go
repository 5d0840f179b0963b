package report

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/stats"
)

// awrSections renders `interlink awr`: one section per report (header,
// cluster sections as tables, absent sections named), then the findings.
// Every string is report text; html/template escapes it.
func awrSections(r *awr.Result) []section {
	var out []section
	for i := range r.Reports {
		rep := &r.Reports[i]
		s := section{Kind: "awr", Title: "AWR: " + rep.File}
		s.para("%s; database %s (id %s).", awrKind(rep), orDash(rep.DBName), orDash(rep.DBID))
		if rep.BeginSnap != nil && rep.EndSnap != nil {
			s.para("Snapshots %d (%s) to %d (%s).", rep.BeginSnap.ID, rep.BeginSnap.Time, rep.EndSnap.ID, rep.EndSnap.Time)
		}
		for j := range rep.Instances {
			awrInstanceBlocks(&s, &rep.Instances[j])
		}
		for _, n := range rep.Notes {
			s.note("%s", n)
		}
		out = append(out, s)
	}
	sm := r.Summary
	f := section{Kind: "awr", Title: "AWR findings", Status: statusClass(sm.Status),
		Badge: fmt.Sprintf("%s: %d critical, %d warning, %d info", sm.Status, sm.Critical, sm.Warning, sm.Info)}
	if len(r.Findings) == 0 {
		f.para("No finding.")
	}
	for i := range r.Findings {
		fd := r.Findings[i]
		f.Blocks = append(f.Blocks, block{Finding: &fd})
	}
	return append(out, f)
}

func numCell(x *float64) cell { return cell{Text: val(x), Class: "num"} }

func awrInstanceBlocks(s *section, in *awr.Instance) {
	s.heading(fmt.Sprintf("Instance %d %s on %s", in.Number, orDash(in.Name), orDash(in.Host)))
	s.para("Elapsed %s, DB time %s.", mins(in.ElapsedSeconds), mins(in.DBTimeSeconds))
	kv := &table{Head: []string{"figure", "value"}}
	add := func(name string, x *float64) { kv.Rows = append(kv.Rows, []cell{{Text: name}, numCell(x)}) }
	if l := in.Load; l != nil {
		add("DB time per second (s)", l.DBTimePerSec)
		add("DB CPU per second (s)", l.DBCPUPerSec)
		add("transactions per second", l.TransactionsPerSec)
		add("executes per second", l.ExecutesPerSec)
	}
	if g := in.GCLoad; g != nil {
		add("global cache blocks received per second", g.BlocksReceivedPerSec)
		add("global cache blocks served per second", g.BlocksServedPerSec)
		add("GCS/GES messages received per second", g.MessagesReceivedPerSec)
		add("GCS/GES messages sent per second", g.MessagesSentPerSec)
		add("Estd Interconnect traffic (KB/s)", g.TrafficKBPerSec)
	}
	if in.GCBlocksLost != nil || in.GCBlocksCorrupt != nil || in.GCLostBlockWaits != nil {
		add("gc blocks lost in the interval", in.GCBlocksLost)
		add("gc blocks corrupt in the interval", in.GCBlocksCorrupt)
		add("waits on gc cr/current block lost", in.GCLostBlockWaits)
	}
	if e := in.GCEfficiency; e != nil {
		add("buffer access: local cache %", e.LocalPct)
		add("buffer access: remote cache %", e.RemotePct)
		add("buffer access: disk %", e.DiskPct)
	}
	if w := in.GCWorkload; w != nil {
		add("avg cr block receive time (ms)", w.CRReceiveMs)
		add("avg current block receive time (ms)", w.CurrentReceiveMs)
		add("avg cr block flush time (ms)", w.CRFlushMs)
		add("avg current block flush time (ms)", w.CurrentFlushMs)
	}
	if len(kv.Rows) > 0 {
		s.table(kv)
	}
	if in.Waits != nil && len(in.Waits) == 0 {
		s.note("%s lists no gc wait event.", in.WaitsFrom)
	}
	if len(in.Waits) > 0 {
		t := &table{Head: []string{"gc wait event", "waits", "total (s)", "avg (ms)", "% DB time"}}
		for _, w := range in.Waits {
			t.Rows = append(t.Rows, []cell{{Text: w.Name}, numCell(w.Waits), numCell(w.TotalSeconds), numCell(w.AvgMs), numCell(w.PctDBTime)})
		}
		s.note("Wait events from %s.", in.WaitsFrom)
		s.table(t)
	}
	if len(in.Pings) > 0 {
		t := &table{Head: []string{"target instance", "500 B count", "avg (ms)", "stddev", "8 KiB count", "avg (ms)", "stddev"}}
		for _, p := range in.Pings {
			t.Rows = append(t.Rows, []cell{{Text: fmt.Sprint(p.Target), Class: "num"}, numCell(p.Count500B), numCell(p.Avg500BMs), numCell(p.Stddev500Ms),
				numCell(p.Count8K), numCell(p.Avg8KMs), numCell(p.Stddev8KMs)})
		}
		s.table(t)
	}
	if len(in.Devices) > 0 {
		t := &table{Head: []string{"device", "address", "public", "send MB/s", "send errors", "send dropped", "receive MB/s", "receive errors", "receive dropped", "overruns", "frame errors"}}
		for _, d := range in.Devices {
			t.Rows = append(t.Rows, []cell{{Text: d.Name}, {Text: d.Address}, {Text: orDash(d.Public)}, numCell(d.SendMBPerSec), numCell(d.SendErrors), numCell(d.SendDropped),
				numCell(d.ReceiveMBPerSec), numCell(d.ReceiveErrors), numCell(d.ReceiveDropped), numCell(d.ReceiveOverrun), numCell(d.ReceiveFrameErrs)})
		}
		s.table(t)
	}
	var absent []string
	for _, st := range in.Sections {
		if st.Status != "present" {
			absent = append(absent, st.Name+" ("+st.Status+")")
		}
	}
	if len(absent) > 0 {
		s.note("Not in this report: %s.", strings.Join(absent, "; "))
	}
}

// awrDiffSection renders `interlink awr diff`: per instance a table of
// every metric before and after with its ratio and verdict.
func awrDiffSection(d *awr.Diff) section {
	status, badge := "ok", fmt.Sprintf("%d better, %d worse", d.Improved, d.Worsened)
	if d.Worsened > 0 {
		status = "warning"
	}
	s := section{Kind: "awr", Title: "AWR before and after", Status: status, Badge: badge}
	s.list([]string{"before: " + strings.Join(d.Before, ", "), "after: " + strings.Join(d.After, ", ")})
	s.note("%s", d.Note)
	mixed := d.Mixed()
	if mixed {
		var dbs []string
		for _, db := range d.Databases {
			dbs = append(dbs, fmt.Sprintf("%s (DB id %s, release %s): %d report(s) before, %d after", orDash(db.Name), orDash(db.ID), orDash(strings.Join(db.Releases, ", ")), db.Before, db.After))
		}
		s.note("The reports are of %d databases, compared apart (--any-db).", len(d.Databases))
		s.list(dbs)
		for _, u := range d.Unmatched() {
			s.note("%s", u)
		}
	}
	for _, in := range d.Instances {
		if mixed {
			s.heading(fmt.Sprintf("Database %s (DB id %s), instance %d %s", orDash(in.DBName), orDash(in.DBID), in.Number, orDash(in.Name)))
		} else {
			s.heading(fmt.Sprintf("Instance %d %s", in.Number, orDash(in.Name)))
		}
		head := []string{"metric", "unit", "before", "after", "ratio", "verdict"}
		if !d.OneSample {
			head = []string{"metric", "unit", "before (median)", "after (median)", "ratio", stats.Pct(d.Confidence) + " CI of the ratio", "p", "verdict"}
		}
		t := &table{Head: head}
		for _, m := range in.Metrics {
			ratio := "-"
			if m.Ratio != nil {
				ratio = fmt.Sprintf("%.3f (%+.1f %%)", *m.Ratio, (*m.Ratio-1)*100)
			}
			cls := map[string]string{"better": "ok", "worse": "critical"}[m.Verdict]
			v := m.Verdict
			if m.Better != "" {
				v += " (" + m.Better + " is better)"
			}
			row := []cell{{Text: m.Metric}, {Text: m.Unit}, {Text: fnum(m.MedianBefore), Class: "num"}, {Text: fnum(m.MedianAfter), Class: "num"}, {Text: ratio, Class: "num"}}
			if !d.OneSample {
				ci, p := "-", "-"
				if m.RatioCI != nil {
					ci = fmt.Sprintf("%.3f to %.3f", m.RatioCI.Low, m.RatioCI.High) + m.RatioCI.LevelNote()
				}
				if m.P != nil {
					p = fmt.Sprintf("%.3g", *m.P)
					if m.PHolm != nil {
						p += fmt.Sprintf(" (Holm %.3g)", *m.PHolm)
					}
				}
				row = append(row, cell{Text: ci, Class: "num"}, cell{Text: p, Class: "num"})
			}
			t.Rows = append(t.Rows, append(row, cell{Text: v, Class: cls}))
		}
		s.table(t)
	}
	return s
}
