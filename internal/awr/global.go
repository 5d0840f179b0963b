package awr

import (
	"math"
	"strconv"
	"strings"
)

// The sections of a global report (awrgrpt.sql, "WORKLOAD REPOSITORY
// REPORT (RAC)") are tables with one row per instance, the instance number
// (I#) first, and rows that summarise the cluster ("*", Sum, Avg, Std,
// Min, Max), which are not kept:
//
//	  I#    Local %  Remote %    Disk % Locality %
//	---- ---------- --------- --------- ----------
//	   1      97.71      1.14      1.15      88.40
//
// Tables with several rows per instance (Top Timed Events, Ping
// Statistics, the interconnect tables) print I# on an instance's first
// row only: the text leaves it blank, the HTML hides it in a <div
// class="hidden">. The column orders are those of testdata/README.md:
// Oracle 19c's, as its public reports print them.

// aggregates are the first cells of the rows that summarise the cluster.
var aggregates = map[string]bool{"*": true, "Sum": true, "Avg": true, "Std": true, "Min": true, "Max": true}

// instRow splits the instance number off a global row. ok is false for
// the rows that summarise the cluster (and the rows after them with I#
// left blank) and for rows that do not start with a number.
func instRow(b *builder, r row) (*Instance, int, []string, bool) {
	if len(r.cells) == 0 {
		return nil, 0, nil, false
	}
	first, cells := strings.TrimSpace(r.cells[0]), r.cells[1:]
	if !r.exact && r.indent > 4 {
		// I# left blank: the previous row's instance (I# is 4 wide).
		first, cells = b.last, r.cells
	}
	b.last = first
	if aggregates[first] {
		return nil, 0, nil, false
	}
	n, err := strconv.Atoi(first)
	if err != nil || n < 0 || n > 10000 {
		b.reject()
		return nil, 0, nil, false
	}
	in := b.instance(n)
	if in == nil {
		return nil, 0, nil, false
	}
	return in, n, cells, true
}

// words returns a text row's cells as words (a text row's cells are
// already words; HTML cells are kept as they are).
func words(r row, c []string) []string {
	if r.exact {
		return c
	}
	return strings.Fields(strings.Join(c, " "))
}

// parseGSummary reads the Database Summary row. 19c prints Id, Name,
// Unique Name, Role, Edition, RAC, CDB, Block Size, the begin and end
// snapshot ids, instances and hosts in the report and in all, DB time and
// elapsed minutes; earlier releases fewer columns. So the row is read by
// shape: the database id (the first number of six digits or more), its
// name after it, RAC, the block size (a power of two from 2048 to 32768)
// and the two snapshot ids after it.
func parseGSummary(b *builder, r row) {
	c := words(r, r.cells)
	// The report's total minutes end the row, with two decimals: the
	// report's decimal separator.
	if last := strings.TrimSpace(c[len(c)-1]); len(last) > 3 && (last[len(last)-3] == ',' || last[len(last)-3] == '.') {
		b.decComma = last[len(last)-3] == ','
		b.rep.DecimalComma = b.decComma
	}
	sized := false
	for i, w := range c {
		w = strings.TrimSpace(w)
		switch {
		case b.rep.DBID == "" && len(w) >= 6 && allDigits(w):
			b.rep.DBID = w
			if i+1 < len(c) {
				b.rep.DBName = strings.TrimSpace(c[i+1])
			}
		case b.rep.RAC == nil && (w == "YES" || w == "NO"):
			v := w == "YES"
			b.rep.RAC = &v
		case b.rep.Release == "" && releaseRE.MatchString(w):
			b.rep.Release = w
		case !sized && b.rep.DBID != "" && i+2 < len(c) && blockSize(w):
			sized = true
			b.glob.blockSize, _ = strconv.ParseFloat(w, 64)
			bs, e1 := strconv.ParseInt(strings.TrimSpace(c[i+1]), 10, 64)
			es, e2 := strconv.ParseInt(strings.TrimSpace(c[i+2]), 10, 64)
			if e1 == nil && e2 == nil && b.rep.BeginSnap == nil {
				b.rep.BeginSnap, b.rep.EndSnap = &Snap{ID: bs}, &Snap{ID: es}
			}
		}
	}
}

func blockSize(w string) bool {
	switch w {
	case "2048", "4096", "8192", "16384", "32768":
		return true
	}
	return false
}

// parseGInstance reads Database Instances Included In Report:
//
//	I# Instance Host Startup Begin-Snap-Time End-Snap-Time Release Elapsed(min) DB-time(min) Up-Time(hrs) AAS Platform
//
// Average active sessions are DB time per second.
func parseGInstance(b *builder, r row) {
	in, _, c, ok := instRow(b, r)
	if !ok {
		return
	}
	c = words(r, c)
	if len(c) < 2 {
		b.reject()
		return
	}
	in.Name, in.Host = strings.TrimSpace(c[0]), strings.TrimSpace(c[1])
	for i, w := range c {
		if !releaseRE.MatchString(strings.TrimSpace(w)) {
			continue
		}
		if b.rep.Release == "" {
			b.rep.Release = strings.TrimSpace(w)
		}
		snapTimes(b, r, c[:i])
		if i+2 < len(c) {
			if m, ok := num(c[i+1], b.decComma); ok {
				in.ElapsedSeconds = f(math.Round(m*60*1000) / 1000)
			}
			if m, ok := num(c[i+2], b.decComma); ok {
				in.DBTimeSeconds = f(math.Round(m*60*1000) / 1000)
			}
		}
		if i+4 < len(c) {
			if aas := ptr(c[i+4], b.decComma); aas != nil {
				load(in).DBTimePerSec = aas
			}
		}
		break
	}
	b.mark(secGInst, in.Number)
}

// snapTimes sets the report's snapshot times from the begin and end snap
// times that precede the release (two cells, or four words of text).
func snapTimes(b *builder, r row, c []string) {
	if b.rep.BeginSnap == nil || b.rep.BeginSnap.Time != "" {
		return
	}
	switch {
	case r.exact && len(c) >= 2:
		b.rep.BeginSnap.Time, b.rep.EndSnap.Time = strings.TrimSpace(c[len(c)-2]), strings.TrimSpace(c[len(c)-1])
	case !r.exact && len(c) >= 4:
		n := len(c)
		b.rep.BeginSnap.Time, b.rep.EndSnap.Time = c[n-4]+" "+c[n-3], c[n-2]+" "+c[n-1]
	}
}

// load returns in's load profile, creating it.
func load(in *Instance) *LoadProfile {
	if in.Load == nil {
		in.Load = &LoadProfile{}
	}
	return in.Load
}

// parseGTime reads Time Model: I#, DB time (s), DB CPU (s) and others. DB
// CPU per second is DB CPU over the elapsed time (finishGlobal).
func parseGTime(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) < 2 {
		b.reject()
		return
	}
	if v := ptr(c[1], b.decComma); v != nil {
		b.glob.cpu(n, *v)
		b.mark(secGTime, in.Number)
	}
}

// parseGEff reads Global Cache Efficiency Percentages: I#, local %,
// remote %, disk % (and, from 12.2, locality %).
func parseGEff(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) < 3 {
		b.reject()
		return
	}
	d := b.decComma
	in.GCEfficiency = &GCEfficiency{LocalPct: ptr(c[0], d), RemotePct: ptr(c[1], d), DiskPct: ptr(c[2], d)}
	b.mark(secGEff, n)
}

// parseGWork reads the workload characteristics. 19c's Global Latency
// Characteristics, in microseconds (its headings say "(us)"): I#, global
// enqueue get, then CR receive, build, flush, log flush %, and current
// (CU) receive, pin, flush, log flush %. Before it, Global Cache and
// Enqueue Workload Characteristics in milliseconds (a reconstruction,
// testdata/README.md): I#, global enqueue get, CR receive, build, send,
// flush, current receive, pin, send, flush.
func parseGWork(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) < 9 {
		b.reject()
		return
	}
	ms := func(s string) *float64 { return avgMs(b, s) }
	pct := func(s string) *float64 { return ptr(s, b.decComma) }
	if b.usec {
		in.GCWorkload = &GCWorkload{EnqueueGetMs: ms(c[0]), CRReceiveMs: ms(c[1]), CRBuildMs: ms(c[2]), CRFlushMs: ms(c[3]), CRFlushesPct: pct(c[4]),
			CurrentReceiveMs: ms(c[5]), CurrentPinMs: ms(c[6]), CurrentFlushMs: ms(c[7]), CurrentFlushesPct: pct(c[8])}
	} else {
		in.GCWorkload = &GCWorkload{EnqueueGetMs: ms(c[0]), CRReceiveMs: ms(c[1]), CRBuildMs: ms(c[2]), CRSendMs: ms(c[3]),
			CRFlushMs: ms(c[4]), CurrentReceiveMs: ms(c[5]), CurrentPinMs: ms(c[6]), CurrentSendMs: ms(c[7]), CurrentFlushMs: ms(c[8])}
	}
	b.mark(secGWork, n)
}

// waitClasses are Oracle's wait classes, longest first, to split a text
// row's class from its event.
var waitClasses = []string{"Administrative", "Configuration", "Application", "Concurrency", "System I/O", "Scheduler",
	"Queueing", "User I/O", "Cluster", "Network", "Commit", "DB CPU", "Other", "Idle"}

// parseGTop reads Top Timed Events: I#, wait class, event, waits,
// %timeouts, total wait (s), average wait, % DB time, and on the cluster's
// rows ("*") the average, minimum, maximum and standard deviation of the
// instances' averages and their count.
func parseGTop(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	var event string
	var vals []string
	if r.exact {
		if len(c) < 7 {
			b.reject()
			return
		}
		event, vals = strings.TrimSpace(c[1]), c[2:]
	} else {
		line := strings.Join(c, " ")
		for _, wc := range waitClasses {
			if rest, ok := strings.CutPrefix(line, wc+" "); ok {
				line = rest
				break
			}
		}
		event, vals = row{cells: strings.Fields(line)}.split(b.decComma)
		vals = joinUnits(vals, false)
	}
	if !gcEvent(event) {
		waitTable(b, secGTop, in)
		return
	}
	if len(vals) < 5 {
		b.reject()
		return
	}
	d := b.decComma
	addWait(b, secGTop, in, WaitEvent{Name: event, Waits: ptr(vals[0], d), TotalSeconds: ptr(vals[2], d), AvgMs: msPtr(vals[3], d), PctDBTime: ptr(vals[4], d)})
	b.mark(secGTop, n)
}
