package awr

import "strings"

// The summary sections of an awrrpt report are label/value lines:
//
//	Load Profile                    Per Second   Per Transaction  Per Exec  Per Call
//	~~~~~~~~~~~~~~~            ---------------   --------------- --------- ---------
//	             DB Time(s):               2.0               0.1      0.00      0.01
//
//	Global Cache Load Profile
//	~~~~~~~~~~~~~~~~~~~~~~~~~                  Per Second       Per Transaction
//	  Global Cache blocks received:                 12.34                  0.45
//	 Estd Interconnect traffic (KB)                211.34
//
//	Global Cache and Enqueue Services - Workload Characteristics
//	  Avg global cache cr block receive time (ms):      2.4        (11.2)
//	  Avg global cache cr block receive time (us):  2,400.0        (12.2 and later)
//
// (as HTML: one table row per line, the label in the first cell). Each
// parser maps the labels it knows, across releases, to a field; the first
// value is per second. Labels it does not know are skipped.

// kvRow returns the label key and the first value of a label/value row,
// or ok false when the row has no value.
func kvRow(b *builder, r row) (string, string, bool) {
	label, vals := r.split(b.decComma)
	if label == "" || len(vals) == 0 || vals[0] == "" {
		return "", "", false
	}
	return key(label), vals[0], true
}

func parseLoad(b *builder, r row) {
	k, v, ok := kvRow(b, r)
	if !ok {
		return
	}
	in := b.only()
	if in.Load == nil {
		in.Load = &LoadProfile{}
	}
	lp := in.Load
	var dst **float64
	switch k {
	case "db time(s)":
		dst = &lp.DBTimePerSec
	case "db cpu(s)":
		dst = &lp.DBCPUPerSec
	case "transactions":
		dst = &lp.TransactionsPerSec
	case "executes (sql)", "executes":
		dst = &lp.ExecutesPerSec
	case "user calls":
		dst = &lp.UserCallsPerSec
	case "redo size (bytes)", "redo size":
		dst = &lp.RedoBytesPerSec
	case "logical read (blocks)", "logical reads":
		dst = &lp.LogicalReadsPerSec
	default:
		return
	}
	set(b, dst, v, secLoad)
}

// set stores v in *dst and marks the section present, or counts the row
// as unreadable.
func set(b *builder, dst **float64, v, sec string) {
	p := ptr(v, b.decComma)
	if p == nil {
		b.reject()
		return
	}
	*dst = p
	b.mark(sec, onlyKey)
}

func parseGCLoad(b *builder, r row) {
	k, v, ok := kvRow(b, r)
	if !ok {
		return
	}
	in := b.only()
	if in.GCLoad == nil {
		in.GCLoad = &GCLoad{}
	}
	g := in.GCLoad
	var dst **float64
	switch k {
	case "global cache blocks received", "gc blocks received":
		dst = &g.BlocksReceivedPerSec
	case "global cache blocks served", "gc blocks served":
		dst = &g.BlocksServedPerSec
	case "gcs/ges messages received":
		dst = &g.MessagesReceivedPerSec
	case "gcs/ges messages sent":
		dst = &g.MessagesSentPerSec
	case "dbwr fusion writes":
		dst = &g.FusionWritesPerSec
	case "estd interconnect traffic (kb)":
		dst = &g.TrafficKBPerSec
	default:
		return
	}
	set(b, dst, v, secGCLoad)
}

func parseGCEff(b *builder, r row) {
	k, v, ok := kvRow(b, r)
	if !ok {
		return
	}
	in := b.only()
	if in.GCEfficiency == nil {
		in.GCEfficiency = &GCEfficiency{}
	}
	e := in.GCEfficiency
	var dst **float64
	switch k {
	case "buffer access - local cache %":
		dst = &e.LocalPct
	case "buffer access - remote cache %":
		dst = &e.RemotePct
	case "buffer access - disk %":
		dst = &e.DiskPct
	default:
		return
	}
	set(b, dst, v, secGCEff)
}

// parseGCWork reads Workload Characteristics and, into the same struct,
// Messaging Statistics.
func parseGCWork(b *builder, r row) {
	k, v, ok := kvRow(b, r)
	if !ok {
		return
	}
	in := b.only()
	if in.GCWorkload == nil {
		in.GCWorkload = &GCWorkload{}
	}
	// 12.2 and later print these times in microseconds: "... (us)".
	k, usec := strings.CutSuffix(k, "(us)")
	if usec {
		k += "(ms)"
	}
	dst := workField(in.GCWorkload, k)
	if dst == nil {
		return
	}
	p := ptr(v, b.decComma)
	if usec {
		p = us(v, b.decComma)
	}
	if p == nil {
		b.reject()
		return
	}
	*dst = p
	if b.cur != nil && b.cur.key == secGCWork {
		b.mark(secGCWork, onlyKey)
	}
}

// workField maps a Workload Characteristics or Messaging Statistics label
// to its field.
func workField(w *GCWorkload, k string) **float64 {
	switch k {
	case "avg global enqueue get time (ms)":
		return &w.EnqueueGetMs
	case "avg global cache cr block receive time (ms)":
		return &w.CRReceiveMs
	case "avg global cache current block receive time (ms)":
		return &w.CurrentReceiveMs
	case "avg global cache cr block build time (ms)":
		return &w.CRBuildMs
	case "avg global cache cr block send time (ms)":
		return &w.CRSendMs
	case "avg global cache cr block flush time (ms)":
		return &w.CRFlushMs
	case "global cache log flushes for cr blocks served %":
		return &w.CRFlushesPct
	case "avg global cache current block pin time (ms)":
		return &w.CurrentPinMs
	case "avg global cache current block send time (ms)":
		return &w.CurrentSendMs
	case "avg global cache current block flush time (ms)":
		return &w.CurrentFlushMs
	case "global cache log flushes for current blocks served %":
		return &w.CurrentFlushesPct
	case "avg message sent queue time (ms)":
		return &w.MessageSentQueueMs
	case "avg message sent queue time on ksxp (ms)":
		return &w.MessageKSXPQueueMs
	case "avg message received queue time (ms)":
		return &w.MessageReceivedQMs
	case "avg gcs message process time (ms)":
		return &w.GCSMessageProcessMs
	}
	return nil
}
