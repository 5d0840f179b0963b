package awr

import "math"

// The per-instance load of a global report: awrgrpt has no Load Profile
// and no Global Cache Load Profile, but prints their figures per instance
// in System Statistics - Per Second and SysStat and Global Messaging (per
// Sec) - RAC (and their totals over the interval without "Per Second").

// parseGSys reads System Statistics - Per Second: I#, logical reads,
// physical reads, physical writes, redo size (KB), block changes, user
// calls, executes, parses, logons, transactions, all per second.
func parseGSys(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	if len(c) != 10 {
		b.reject()
		return
	}
	d := b.decComma
	l := load(in)
	l.LogicalReadsPerSec, l.UserCallsPerSec, l.ExecutesPerSec, l.TransactionsPerSec = ptr(c[0], d), ptr(c[5], d), ptr(c[6], d), ptr(c[9], d)
	if kb := ptr(c[3], d); kb != nil {
		l.RedoBytesPerSec = f(math.Round(*kb * 1024))
	}
	b.mark(secGSys, n)
}

// parseGMsg reads SysStat and Global Messaging (per Sec) - RAC: I#, gc
// current and cr blocks received, gc current and cr blocks served, CPU
// seconds of GC and IPC, GCS and GES messages received, GCS and GES
// messages sent, messages sent direct and indirect, blocks lost and cr
// failures, per second. The CPU columns are often blank, which a text
// row cannot show: its blocks are read from the left and its messages
// from the right.
func parseGMsg(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	blocks, msgs, ok := gmColumns(r, c)
	if !ok {
		b.reject()
		return
	}
	sum := func(a, b *float64) *float64 {
		if a == nil || b == nil {
			return nil
		}
		return f(math.Round((*a+*b)*100) / 100)
	}
	d := b.decComma
	g := gcLoad(in)
	g.BlocksReceivedPerSec = sum(ptr(blocks[0], d), ptr(blocks[1], d))
	g.BlocksServedPerSec = sum(ptr(blocks[2], d), ptr(blocks[3], d))
	g.MessagesReceivedPerSec = sum(ptr(msgs[0], d), ptr(msgs[1], d))
	g.MessagesSentPerSec = sum(ptr(msgs[2], d), ptr(msgs[3], d))
	b.mark(secGMsg, n)
}

// parseGMsgTotal reads SysStat and Global Messaging - RAC, the same
// columns as totals over the interval, for the blocks lost and the cr
// failures (per second they round to 0).
func parseGMsgTotal(b *builder, r row) {
	in, n, c, ok := instRow(b, r)
	if !ok {
		return
	}
	_, msgs, ok := gmColumns(r, c)
	if !ok {
		b.reject()
		return
	}
	g := gcLoad(in)
	g.BlocksLost, g.CRFailures = ptr(msgs[6], b.decComma), ptr(msgs[7], b.decComma)
	b.mark(secGMsgTotal, n)
}

// gmColumns splits a SysStat and Global Messaging row into its four block
// columns and its eight message columns (GCS, GES received; GCS, GES
// sent; direct, indirect; lost, failures).
func gmColumns(r row, c []string) (blocks, msgs []string, ok bool) {
	if r.exact {
		if len(c) != 14 {
			return nil, nil, false
		}
		return c[:4], c[6:], true
	}
	if len(c) < 12 || len(c) > 14 {
		return nil, nil, false
	}
	return c[:4], c[len(c)-8:], true
}

func gcLoad(in *Instance) *GCLoad {
	if in.GCLoad == nil {
		in.GCLoad = &GCLoad{}
	}
	return in.GCLoad
}

// estdTraffic is Oracle's "Estd Interconnect traffic (KB)" per second
// (as Statspack's sprepins.sql computes it; docs/awr.md): blocks received and served times the block size, plus
// GCS/GES messages sent and received times 200 bytes, in KB. It
// reproduces awrrpt's figure from awrrpt's own rows (the 12.2 report in
// testdata/README.md: 386.6 computed, 386.50 printed, 16 KiB blocks).
func estdTraffic(g *GCLoad, blockSize float64) *float64 {
	if g.BlocksReceivedPerSec == nil || g.BlocksServedPerSec == nil || g.MessagesReceivedPerSec == nil || g.MessagesSentPerSec == nil {
		return nil
	}
	kb := ((*g.BlocksReceivedPerSec+*g.BlocksServedPerSec)*blockSize + (*g.MessagesReceivedPerSec+*g.MessagesSentPerSec)*200) / 1024
	return f(math.Round(kb*100) / 100)
}
