package awr

import "strings"

// The wait events this package keeps: the global cache ones (Cache Fusion
// transfers, their busy, congested and lost variants, gc buffer busy).
// Other events are read past.

// gcEvent reports whether name is a global cache wait event. Text
// reports cut event names at 26 (Foreground Wait Events) or 30 (top
// events) characters; the gc names kept here are shorter.
func gcEvent(name string) bool { return strings.HasPrefix(name, "gc ") }

// parseFGWaits reads a Foreground Wait Events row:
//
//	                                                             Avg
//	                                        %Time Total Wait    wait    Waits   % DB
//	Event                             Waits -outs   Time (s)    (ms)     /txn   time     (11.2)
//	gc cr block 2-way                45,678     0         15       0      0.5    1.2
//
//	Event                            Waits -outs Time (s)  Avg wait     /txn   time     (12c and later)
//	gc cr block 2-way                    3              0  534.00us      1.5     .0
//
// 12c and later leave %Time-outs blank when it is truly 0: a text row
// then has five values, not six.
func parseFGWaits(b *builder, r row) {
	name, vals := r.split(b.decComma)
	name = strings.TrimSpace(name)
	if !gcEvent(name) {
		waitTable(b, secFGWaits, b.only())
		return
	}
	vals = joinUnits(vals, r.exact)
	var w, t, avg, pct string
	switch {
	case r.exact && len(vals) >= 6:
		w, t, avg, pct = vals[0], vals[2], vals[3], vals[5]
	case !r.exact && len(vals) == 6:
		w, t, avg, pct = vals[0], vals[2], vals[3], vals[5]
	case !r.exact && len(vals) == 5:
		w, t, avg, pct = vals[0], vals[1], vals[2], vals[4]
	default:
		b.reject()
		return
	}
	addWait(b, secFGWaits, b.only(), WaitEvent{Name: name, Waits: ptr(w, b.decComma), TotalSeconds: ptr(t, b.decComma),
		AvgMs: msPtr(avg, b.decComma), PctDBTime: ptr(pct, b.decComma)})
}

// parseTop reads a row of the top events table, used when the report has
// no Foreground Wait Events (a report cut after its first page):
//
//	Event                                 Waits     Time(s)   (ms)   time Wait Class   (Top 5, 11.2)
//	Event                                Waits Time (sec)      Wait   time Class       (Top 10, 12c)
//	gc cr block busy                   107,095      214.3    2.00ms     .5 Cluster
func parseTop(b *builder, r row) {
	name, vals := r.split(b.decComma)
	name = strings.TrimSpace(name)
	if !gcEvent(name) {
		waitTable(b, secTop, b.only())
		return
	}
	vals = joinUnits(vals, r.exact)
	if len(vals) < 4 {
		b.reject()
		return
	}
	addWait(b, secTop, b.only(), WaitEvent{Name: name, Waits: ptr(vals[0], b.decComma), TotalSeconds: ptr(vals[1], b.decComma),
		AvgMs: msPtr(vals[2], b.decComma), PctDBTime: ptr(vals[3], b.decComma)})
}

// maxWaits bounds the gc events kept per instance (Oracle has about 60).
const maxWaits = 200

// addWait keeps a gc event of section sec for in. Foreground Wait Events
// take precedence over the top events table, which only fills in when
// the first is absent; a page break repeats no row, so a name seen twice
// keeps its first row.
func addWait(b *builder, sec string, in *Instance, w WaitEvent) {
	if in == nil || w.Waits == nil {
		b.reject()
		return
	}
	if !waitTable(b, sec, in) {
		return
	}
	for _, x := range in.Waits {
		if x.Name == w.Name {
			return
		}
	}
	if len(in.Waits) < maxWaits {
		in.Waits = append(in.Waits, w)
	}
}

// waitTable records that wait table sec had a row for in, gc event or
// not: the table is present, and in.Waits is no longer nil (a table whose
// rows hold no gc event leaves it empty). It reports whether sec's gc
// events are kept: Foreground Wait Events replaces what the top events
// table gave and is never replaced by it.
func waitTable(b *builder, sec string, in *Instance) bool {
	if in == nil {
		return false
	}
	b.mark(sec, keyOf(b, in))
	if in.WaitsFrom == secFGWaits && sec != secFGWaits {
		return false
	}
	if in.WaitsFrom != sec {
		in.Waits, in.WaitsFrom = []WaitEvent{}, sec
	}
	return true
}

// keyOf returns the builder's key of in.
func keyOf(b *builder, in *Instance) int {
	for k, x := range b.byNum {
		if x == in {
			return k
		}
	}
	return onlyKey
}

// joinUnits joins a time unit printed apart from its number ("52.86",
// "s") in a text row.
func joinUnits(vals []string, exact bool) []string {
	if exact {
		return vals
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if isUnit(v) && len(out) > 0 {
			out[len(out)-1] += v
			continue
		}
		out = append(out, v)
	}
	return out
}

// Wait returns the event called name, or nil.
func (in *Instance) Wait(name string) *WaitEvent {
	for i := range in.Waits {
		if in.Waits[i].Name == name {
			return &in.Waits[i]
		}
	}
	return nil
}
