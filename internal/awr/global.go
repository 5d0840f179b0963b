package awr

import (
	"math"
	"strconv"
	"strings"
)

// The sections of a global report (awrgrpt.sql, "WORKLOAD REPOSITORY
// REPORT (RAC)") are tables with one row per instance, the instance number
// (I#) first and a row "*" for the whole cluster, which is not kept:
//
//	  I#    Local %  Remote %    Disk %
//	---- ---------- --------- ---------
//	   1      98.12      1.23      0.65
//
// The column orders are those of testdata/README.md.

// instRow splits the instance number off a global row. ok is false for
// the cluster row "*" and rows that do not start with a number.
func instRow(b *builder, r row) (*Instance, int, []string, bool) {
	if len(r.cells) == 0 {
		return nil, 0, nil, false
	}
	first := strings.TrimSpace(r.cells[0])
	if first == "*" || first == "Sum" || first == "Avg" || first == "Std" {
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
	return in, n, r.cells[1:], true
}

// parseGSummary reads the Database Summary row: the database id (the
// first number of six digits or more), its name after it, RAC, the
// release, and the begin and end snapshot ids after the release.
func parseGSummary(b *builder, r row) {
	c := r.cells
	if !r.exact {
		c = strings.Fields(strings.Join(c, " "))
	}
	// The report's total minutes end the row, with two decimals: the
	// report's decimal separator.
	if last := strings.TrimSpace(c[len(c)-1]); len(last) > 3 && (last[len(last)-3] == ',' || last[len(last)-3] == '.') {
		b.decComma = last[len(last)-3] == ','
		b.rep.DecimalComma = b.decComma
	}
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
			if i+2 < len(c) {
				bs, e1 := strconv.ParseInt(strings.TrimSpace(c[i+1]), 10, 64)
				es, e2 := strconv.ParseInt(strings.TrimSpace(c[i+2]), 10, 64)
				if e1 == nil && e2 == nil {
					b.rep.BeginSnap, b.rep.EndSnap = &Snap{ID: bs}, &Snap{ID: es}
				}
			}
		}
	}
}

// parseGInstance reads Database Instances Included In Report:
//
//	I# Instance Host Startup Begin-Snap-Time End-Snap-Time Release Elapsed(min) DB-time(min) Up-Time(hrs) AAS Platform
func parseGInstance(b *builder, r row) {
	in, _, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if !r.exact {
		c = strings.Fields(strings.Join(c, " "))
	}
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
		if i+2 < len(c) {
			if m, ok := num(c[i+1], b.decComma); ok {
				in.ElapsedSeconds = f(math.Round(m*60*1000) / 1000)
			}
			if m, ok := num(c[i+2], b.decComma); ok {
				in.DBTimeSeconds = f(math.Round(m*60*1000) / 1000)
			}
		}
		break
	}
	b.mark(secGInst, in.Number)
}

// parseGEff reads Global Cache Efficiency Percentages: I#, local %,
// remote %, disk %.
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

// parseGWork reads Global Cache and Enqueue Workload Characteristics:
// I#, global enqueue get, then CR receive, build, send, flush and current
// receive, pin, send, flush, all in ms.
func parseGWork(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) < 9 {
		b.reject()
		return
	}
	d := b.decComma
	in.GCWorkload = &GCWorkload{EnqueueGetMs: ptr(c[0], d), CRReceiveMs: ptr(c[1], d), CRBuildMs: ptr(c[2], d), CRSendMs: ptr(c[3], d),
		CRFlushMs: ptr(c[4], d), CurrentReceiveMs: ptr(c[5], d), CurrentPinMs: ptr(c[6], d), CurrentSendMs: ptr(c[7], d), CurrentFlushMs: ptr(c[8], d)}
	b.mark(secGWork, n)
}

// waitClasses are Oracle's wait classes, longest first, to split a text
// row's class from its event.
var waitClasses = []string{"Administrative", "Configuration", "Application", "Concurrency", "System I/O", "Scheduler",
	"Queueing", "User I/O", "Cluster", "Network", "Commit", "DB CPU", "Other", "Idle"}

// parseGTop reads Top Timed Events: I#, wait class, event, waits,
// %timeouts, total wait (s), average (ms), % DB time.
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

// parseGPing reads Ping Statistics: I#, target, then for 500-byte and
// 8 KiB pings each count, wait time (s), average (ms) and standard
// deviation (ms), as DBA_HIST_INTERCONNECT_PINGS holds them.
func parseGPing(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) != 9 {
		b.reject()
		return
	}
	t, err := strconv.Atoi(strings.TrimSpace(c[0]))
	if err != nil || len(in.Pings) >= maxInstances {
		b.reject()
		return
	}
	d := b.decComma
	in.Pings = append(in.Pings, Ping{Target: t, Count500B: ptr(c[1], d), Avg500BMs: ptr(c[3], d), Stddev500Ms: ptr(c[4], d),
		Count8K: ptr(c[5], d), Avg8KMs: ptr(c[7], d), Stddev8KMs: ptr(c[8], d)})
	b.mark(secGPing, n)
}

// parseGDevice reads Interconnect Device Statistics of a global report:
// I#, then the columns of the awrrpt section.
func parseGDevice(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	dev, ok := device(b, c, r.exact)
	if !ok {
		b.reject()
		return
	}
	if len(in.Devices) < maxDevices {
		in.Devices = append(in.Devices, dev)
	}
	b.mark(secGDevices, n)
}
