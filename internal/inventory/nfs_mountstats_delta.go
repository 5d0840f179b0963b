package inventory

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ErrCountersReset is returned by Sub when a counter of the later reading
// is below the earlier one: the mount was replaced (unmounted and mounted
// again) between the readings, so the difference means nothing.
var ErrCountersReset = errors.New("mountstats counters went backwards (remounted between the readings?)")

// MountPoint is the (unescaped) mount point the statistics belong to.
func (m *MountStats) MountPoint() string { return m.mountPoint }

// Op returns the statistics of one operation ("GETATTR", "WRITE"), zero
// when the mount has made no such request (Errors too, where the kernel
// counts them).
func (m *MountStats) Op(name string) OpStats {
	for _, o := range m.Ops {
		if o.Op == name {
			return o
		}
	}
	o := OpStats{Op: name}
	if m.opFields >= opErrorsField {
		o.Errors = new(uint64)
	}
	return o
}

// Retransmissions is the sum over every operation of requests sent again.
func (m *MountStats) Retransmissions() uint64 {
	var n uint64
	for _, o := range m.Ops {
		n += o.Retransmissions()
	}
	return n
}

// MajorTimeouts is the sum over every operation of major timeouts (the
// "server not responding" events of a hard mount).
func (m *MountStats) MajorTimeouts() uint64 {
	var n uint64
	for _, o := range m.Ops {
		n += o.MajorTimeouts
	}
	return n
}

// AvgRTT is the mean round-trip time of one request (network plus server),
// zero without requests.
func (o OpStats) AvgRTT() time.Duration { return avg(o.RTT, o.Requests) }

// AvgExecute is the mean time from the request being queued to its reply
// being handled (RTT plus the client's own queueing), zero without requests.
func (o OpStats) AvgExecute() time.Duration { return avg(o.Execute, o.Requests) }

func avg(d time.Duration, n uint64) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

// Sub returns what the mount did between before and m, two readings of
// the same mount: every counter and cumulative time as a difference, Age
// as the time between the readings, and only the operations with requests
// in between (sorted as m lists them). A nil before returns a copy of m.
// A counter that went backwards gives ErrCountersReset.
func (m *MountStats) Sub(before *MountStats) (*MountStats, error) {
	d := *m
	d.Ops = nil
	if m.Transport != nil {
		t := *m.Transport
		d.Transport = &t
	}
	if before == nil {
		d.Ops = append(d.Ops, m.Ops...)
		return &d, nil
	}
	var bad []string
	sub := func(what string, a, b uint64) uint64 {
		if a < b {
			bad = append(bad, what)
			return 0
		}
		return a - b
	}
	subD := func(what string, a, b time.Duration) time.Duration {
		if a < b {
			bad = append(bad, what)
			return 0
		}
		return a - b
	}
	d.Age = subD("age", m.Age, before.Age)
	d.ReadBytes = sub("bytes", m.ReadBytes, before.ReadBytes)
	d.WriteBytes = sub("bytes", m.WriteBytes, before.WriteBytes)
	d.DirectReadBytes = sub("bytes", m.DirectReadBytes, before.DirectReadBytes)
	d.DirectWriteBytes = sub("bytes", m.DirectWriteBytes, before.DirectWriteBytes)
	d.ServerReadBytes = sub("bytes", m.ServerReadBytes, before.ServerReadBytes)
	d.ServerWriteBytes = sub("bytes", m.ServerWriteBytes, before.ServerWriteBytes)
	if t, b := d.Transport, before.Transport; t != nil && b != nil && t.Proto == b.Proto {
		t.Sends = sub("xprt", t.Sends, b.Sends)
		t.Receives = sub("xprt", t.Receives, b.Receives)
		t.BadXIDs = sub("xprt", t.BadXIDs, b.BadXIDs)
		t.Connects = sub("xprt", t.Connects, b.Connects)
		t.Backlog = sub("xprt", t.Backlog, b.Backlog)
		t.ActiveReq = sub("xprt", t.ActiveReq, b.ActiveReq)
	}
	for _, a := range m.Ops {
		b := before.Op(a.Op)
		o := OpStats{Op: a.Op,
			Requests:      sub(a.Op, a.Requests, b.Requests),
			Transmissions: sub(a.Op, a.Transmissions, b.Transmissions),
			MajorTimeouts: sub(a.Op, a.MajorTimeouts, b.MajorTimeouts),
			BytesSent:     sub(a.Op, a.BytesSent, b.BytesSent),
			BytesReceived: sub(a.Op, a.BytesReceived, b.BytesReceived),
			Queue:         subD(a.Op, a.Queue, b.Queue),
			RTT:           subD(a.Op, a.RTT, b.RTT),
			Execute:       subD(a.Op, a.Execute, b.Execute),
		}
		if a.Errors != nil && b.Errors != nil {
			e := sub(a.Op, *a.Errors, *b.Errors)
			o.Errors = &e
		}
		if o.Requests > 0 || o.Transmissions > 0 {
			d.Ops = append(d.Ops, o)
		}
	}
	// An operation of before that m no longer lists went to zero: a reset.
	for _, b := range before.Ops {
		if m.Op(b.Op).Requests == 0 && b.Requests > 0 {
			bad = append(bad, b.Op)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("%s: %s: %w", m.mountPoint, strings.Join(uniq(bad), ", "), ErrCountersReset)
	}
	return &d, nil
}

func uniq(s []string) []string {
	out := s[:0:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
