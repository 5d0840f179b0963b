package awr

import "strings"

// Instance Activity Stats (awrrpt; "Other Instance Activity Stats" in
// 11.2.0.4, beside "Key Instance Activity Stats") prints every statistic of
// the interval as its total, per second and per transaction:
//
//	Statistic                                     Total     per Second     per Trans
//	-------------------------------- ------------------ -------------- -------------
//	gc blocks lost                                   96           0.03          0.00
//
// Only the statistics that count blocks lost on the interconnect are kept:
// "gc blocks lost" and "gc blocks corrupt". The wait events "gc cr block
// lost" and "gc current block lost" count waits, not blocks (a 12.2 report
// printing 42,379 blocks lost waited 105 times), so the statistic is the
// figure of lost blocks and the waits a second one.

// parseActivity reads an Instance Activity Stats row. Statistic names may
// hold digits ("Parallel operations downgraded 25 to 50 pct"), so a row
// that does not split cleanly is not an error: only the rows kept must.
func parseActivity(b *builder, r row) {
	name, vals := r.split(b.decComma)
	if name == "" || len(vals) == 0 {
		return
	}
	in := b.only()
	b.mark(secActivity, onlyKey)
	var dst **float64
	switch key(name) {
	case "gc blocks lost":
		dst = &in.GCBlocksLost
	case "gc blocks corrupt":
		dst = &in.GCBlocksCorrupt
	default:
		return
	}
	p := ptr(vals[0], b.decComma)
	if p == nil {
		b.reject()
		return
	}
	*dst = p
	if dst == &in.GCBlocksLost {
		in.GCBlocksLostFrom = secActivity
	}
}

// lostWaitEvents are the wait events of lost blocks.
var lostWaitEvents = []string{"gc cr block lost", "gc current block lost"}

// finishLost fills the lost-block figures of in from what was read: the
// statistic of a global report from its SysStat and Global Messaging
// totals, and the waits of the lost-block events from the wait table
// (none from a top events table that does not list them, nor for a
// database that says RAC NO: it has no interconnect to lose blocks on, so
// its 0 would be no sample).
func finishLost(in *Instance, rac *bool) {
	if in.GCBlocksLost == nil && in.GCLoad != nil && in.GCLoad.BlocksLost != nil {
		in.GCBlocksLost, in.GCBlocksLostFrom = in.GCLoad.BlocksLost, secGMsgTotal
	}
	if in.Waits == nil || rac != nil && !*rac {
		return
	}
	n, listed := 0.0, false
	for _, name := range lostWaitEvents {
		if w := in.Wait(name); w != nil && w.Waits != nil {
			n, listed = n+*w.Waits, true
		}
	}
	// A top events table lists only the largest events: one without the
	// lost-block events says nothing of their waits, unlike Foreground
	// Wait Events, which lists every event that waited.
	if listed || in.WaitsFrom == secFGWaits {
		in.GCLostBlockWaits = &n
	}
}

// finishSamples makes absent the figures the report prints as 0 for want
// of samples: a ping size counted 0 times has no average nor deviation,
// and an instance that received no block (0 blocks/s) no receive time
// when the report prints 0 for it. A non-zero time is kept: blocks per
// second round to 0 when a few blocks were received in an hour.
func finishSamples(in *Instance) {
	for i := range in.Pings {
		p := &in.Pings[i]
		if zero(p.Count500B) {
			p.Avg500BMs, p.Stddev500Ms = nil, nil
		}
		if zero(p.Count8K) {
			p.Avg8KMs, p.Stddev8KMs = nil, nil
		}
	}
	if w := in.GCWorkload; w != nil && in.GCLoad != nil && zero(in.GCLoad.BlocksReceivedPerSec) {
		for _, t := range []**float64{&w.CRReceiveMs, &w.CurrentReceiveMs} {
			if zero(*t) {
				*t = nil
			}
		}
	}
}

func zero(p *float64) bool { return p != nil && *p == 0 }

// noData is what Oracle prints under a section's title when the section
// has nothing for the interval: the section is then empty, not absent.
func noData(s string) bool {
	return strings.Contains(s, "No data exists for this section of the report")
}

// endOfReport is the last line of a whole report.
func endOfReport(s string) bool { return strings.TrimSpace(s) == "End of Report" }

// title takes text that may be the report's title: it sets the report's
// kind, and notes a PDB report (awrrpt run for a pluggable database),
// which has no cluster sections.
func (b *builder) title(s string) {
	k := kindOf(s)
	if k == "" {
		return
	}
	if b.rep.Kind == "" {
		b.rep.Kind = k
	}
	if strings.Contains(s, "WORKLOAD REPOSITORY PDB report") {
		b.pdb = true
	}
}
