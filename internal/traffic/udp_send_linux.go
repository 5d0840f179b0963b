package traffic

import (
	"context"
	"net"
	"time"

	"golang.org/x/net/ipv4"
)

func udpSend(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	off := opt.overhead()
	if spec.Len < off+HeaderLen {
		return 0, errorf("udp: --len %d is below the %d bytes of headers", spec.Len, off+HeaderLen)
	}
	// Segmentation offload only when unpaced: a paced sender sends a few
	// datagrams at a time anyway, and its drops must count per datagram
	// (a qdisc that refuses a segmented buffer is counted once).
	mtu := side.MTU
	if spec.Paced() {
		mtu = 0
	}
	gso, noGSO := gsoAvailable()
	if PacketsPerDatagram(spec.Len, mtu) != 1 {
		noGSO = "" // nothing to segment: not a fallback
	}
	lay := newSendLayout(spec.Len, mtu, gso)
	start := time.Now()
	end := start.Add(spec.Duration)
	conn.SetWriteDeadline(end.Add(time.Second)) // for the netpoller's conn
	pc, release := acquireRaw(conn)
	defer release()
	var p *pacer
	if spec.Paced() {
		// Forgive at most 10 ms of backlog (and never less than a batch).
		per10ms := int(float64(spec.RateBitsPerSec) / 8 / float64(spec.Len) / 100)
		p = newPacer(start, spec.RateBitsPerSec, spec.Len, max(lay.capacity(), per10ms))
	}
	var fl *flowSender
	var fb *feedbackIn
	if spec.Flow() {
		// Until the receiver's first feedback grants its window, what
		// Linux's default receive buffer holds: the receiver may not have
		// enlarged its own yet when the first datagrams arrive.
		fl = newFlowSender(start, flowWindow(defaultReceiveBuffer, spec.Len, side.MTU))
		fb = newFeedbackIn(pc, off, opt)
	}
	iv := newIntervals(start, spec.Interval, RoleSender, opt.Observer)
	var seq uint64
	var in Interval
	var err error
	h := Header{Kind: KindData}
	now := start
	for ctx.Err() == nil && now.Before(end) {
		if iv.due(now) {
			iv.close(now, in)
			in = Interval{}
		}
		n := lay.capacity()
		if p != nil {
			var wait time.Duration
			n, wait = p.due(now, n)
			if n == 0 {
				nanosleep(min(wait, end.Sub(now), iv.next.Sub(now)))
				now = time.Now()
				continue
			}
		}
		if fl != nil {
			var wait time.Duration
			if n, wait, err = flowDue(fl, fb, seq, n, now); err != nil {
				break
			}
			if n == 0 {
				t0 := now
				err = fb.wait(fl, min(wait, end.Sub(now), iv.next.Sub(now)))
				now = time.Now()
				fl.st.WaitNs += int64(now.Sub(t0))
				if err != nil {
					break
				}
				continue
			}
		}
		if err = opt.wait(ctx, n*spec.Len); err != nil {
			break
		}
		h.Stamp = now.UnixNano()
		for i := 0; i < n; i++ {
			h.Seq = seq + uint64(i)
			d := lay.slot(i)
			h.Put(d[off:])
			if err = opt.seal(d); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		msgs := lay.fill(n)
		sent, werr := pc.WriteBatch(lay.ms[:msgs], 0)
		if werr != nil && sent == 0 && lay.segs > 1 && gsoRefused(werr) {
			// No UDP segmentation offload here: send datagram by datagram
			// and try this batch again.
			lay = newSendLayout(spec.Len, mtu, false)
			noGSO = "the kernel refused UDP_SEGMENT on this path: " + werr.Error()
			now = time.Now()
			continue
		}
		if sent > 0 {
			got := lay.datagrams(sent, n)
			seq += uint64(got)
			in.Messages += int64(got)
			in.Bytes += int64(got) * int64(spec.Len)
			if fl != nil {
				fl.sent(seq)
			}
		}
		if werr != nil && !isTimeout(werr) {
			err = werr
			break
		}
		now = time.Now()
	}
	if p != nil {
		// A sender late at the end has its last backlog forgiven too.
		p.due(now, 0)
		side.UDP.LateNs = int64(p.late)
		if l := lateLimit(time.Duration(p.late), now.Sub(start)); l != nil {
			side.LimitedBy = append(side.LimitedBy, *l)
		}
	}
	if lay.segs > 1 {
		side.UDP.GSO = lay.segs
	}
	side.UDP.NoGSO = noGSO
	iv.finish(now, in)
	d := now.Sub(start)
	side.Intervals = iv.list
	side.Messages = int64(seq)
	side.Bytes = int64(seq) * int64(spec.Len)
	side.UDP.Sent = int64(seq)
	if fl != nil {
		side.UDP.Flow = &fl.st
		side.UDP.Foreign = fb.foreign
		side.UDP.Truncated = fb.truncated
	}
	if err != nil {
		return d, errorf("udp send: %w", err)
	}
	sendEndMarkers(ctx, pc, opt, seq)
	return d, nil
}

// sendEndMarkers tells the receiver that seq datagrams were sent, at
// endMarkerDelays: bounded, and skipped when cancelled (the receiver is
// being cancelled too).
func sendEndMarkers(ctx context.Context, pc batchConn, opt Options, seq uint64) {
	off := opt.overhead()
	mk := make([]byte, off+HeaderLen)
	(&Header{Kind: KindEnd, Seq: seq, Stamp: time.Now().UnixNano()}).Put(mk[off:])
	marker := []ipv4.Message{{Buffers: [][]byte{mk}}}
	var last time.Duration
	for _, at := range endMarkerDelays {
		if ctx.Err() != nil {
			break
		}
		nanosleep(at - last)
		last = at
		if opt.seal(mk) == nil {
			pc.WriteBatch(marker, 0)
		}
	}
}

// flowDue is how many of n datagrams a flow-controlled sender may send now
// with seq next. Short of n it first takes the feedback that has arrived
// (reading it only then keeps the system calls off a sender the window does
// not hold back). When it may send none, wait is how long to wait for
// feedback before asking again.
func flowDue(fl *flowSender, fb *feedbackIn, seq uint64, n int, now time.Time) (int, time.Duration, error) {
	c := fl.credit(seq)
	if c < n {
		if err := fb.poll(fl); err != nil {
			return 0, 0, err
		}
		c = fl.credit(seq)
	}
	if c == 0 {
		if wait := fl.stalled(now); wait > 0 {
			return 0, wait, nil
		}
		c = fl.credit(seq) // a probe, or flow control given up
	}
	return min(n, c), 0, nil
}
