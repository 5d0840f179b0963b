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
	start := time.Now()
	end := start.Add(spec.Duration)
	conn.SetWriteDeadline(end.Add(time.Second)) // for the netpoller's conn
	pc, release := acquireRaw(conn)
	defer release()
	var s udpSender
	s.init(spec, side.MTU, pc, opt, start)
	now, err := s.run(ctx, start, end)
	d := s.finish(side, start, now)
	if err != nil {
		return d, errorf("udp send: %w", err)
	}
	sendEndMarkers(ctx, pc, opt, s.seq)
	return d, nil
}

// udpSender is a UDP sender while it runs: how it lays out its batches,
// what paces it (a pacer at --rate, or the receiver's flow control), and
// what it has sent.
type udpSender struct {
	spec  Spec
	opt   Options
	off   int
	mtu   int // 0 when not segmenting (paced)
	lay   *sendLayout
	pc    batchConn
	p     *pacer
	fl    *flowSender
	fb    *feedbackIn
	iv    *intervals
	seq   uint64
	in    Interval
	h     Header
	noGSO string
}

func (s *udpSender) init(spec Spec, mtu int, pc batchConn, opt Options, start time.Time) {
	*s = udpSender{spec: spec, opt: opt, off: opt.overhead(), mtu: mtu, pc: pc, h: Header{Kind: KindData}}
	// Segmentation offload only when unpaced: a paced sender sends a few
	// datagrams at a time anyway, and its drops must count per datagram
	// (a qdisc that refuses a segmented buffer is counted once).
	if spec.Paced() {
		s.mtu = 0
	}
	gso, noGSO := gsoAvailable()
	if PacketsPerDatagram(spec.Len, s.mtu) != 1 {
		noGSO = "" // nothing to segment: not a fallback
	}
	s.noGSO = noGSO
	s.lay = newSendLayout(spec.Len, s.mtu, gso)
	if spec.Paced() {
		// Forgive at most 10 ms of backlog (and never less than a batch).
		per10ms := int(float64(spec.RateBitsPerSec) / 8 / float64(spec.Len) / 100)
		s.p = newPacer(start, spec.RateBitsPerSec, spec.Len, max(s.lay.capacity(), per10ms))
	}
	if spec.Flow() {
		// Until the receiver's first feedback grants its window, what
		// Linux's default receive buffer holds: the receiver may not have
		// enlarged its own yet when the first datagrams arrive.
		s.fl = newFlowSender(start, flowWindow(defaultReceiveBuffer, spec.Len, mtu))
		s.fb = newFeedbackIn(pc, s.off, opt)
	}
	s.iv = newIntervals(start, spec.Interval, RoleSender, opt.Observer)
}

// run sends until end (or ctx is done) and returns when it stopped.
func (s *udpSender) run(ctx context.Context, now, end time.Time) (time.Time, error) {
	for ctx.Err() == nil && now.Before(end) {
		if s.iv.due(now) {
			s.iv.close(now, s.in)
			s.in = Interval{}
		}
		n, after, err := s.due(now, end)
		if err != nil {
			return after, err
		}
		if n == 0 {
			now = after
			continue
		}
		if err := s.send(ctx, n, now); err != nil {
			return now, err
		}
		now = time.Now()
	}
	return now, nil
}

// due is how many datagrams may go at now. When none may, it waits (for
// the pacer's next turn, or for the receiver's feedback), no later than
// end or the interval's close, and returns 0 and the time after.
func (s *udpSender) due(now, end time.Time) (int, time.Time, error) {
	n := s.lay.capacity()
	if s.p != nil {
		var wait time.Duration
		if n, wait = s.p.due(now, n); n == 0 {
			nanosleep(min(wait, end.Sub(now), s.iv.next.Sub(now)))
			return 0, time.Now(), nil
		}
	}
	if s.fl != nil {
		var wait time.Duration
		var err error
		if n, wait, err = flowDue(s.fl, s.fb, s.seq, n, now); err != nil || n > 0 {
			return n, now, err
		}
		err = s.fb.wait(s.fl, min(wait, end.Sub(now), s.iv.next.Sub(now)))
		after := time.Now()
		s.fl.st.WaitNs += int64(after.Sub(now))
		return 0, after, err
	}
	return n, now, nil
}

// send seals and writes n datagrams stamped now. A kernel that refuses
// UDP_SEGMENT on this path turns segmentation off; the batch goes again
// datagram by datagram on the next turn.
func (s *udpSender) send(ctx context.Context, n int, now time.Time) error {
	if err := s.opt.wait(ctx, n*s.spec.Len); err != nil {
		return err
	}
	lay, h, off := s.lay, &s.h, s.off
	h.Stamp = now.UnixNano()
	for i := 0; i < n; i++ {
		h.Seq = s.seq + uint64(i)
		d := lay.slot(i)
		h.Put(d[off:])
		if err := s.opt.seal(d); err != nil {
			return err
		}
	}
	msgs := lay.fill(n)
	sent, werr := s.pc.WriteBatch(lay.ms[:msgs], 0)
	if werr != nil && sent == 0 && lay.segs > 1 && gsoRefused(werr) {
		s.lay = newSendLayout(s.spec.Len, s.mtu, false)
		s.noGSO = "the kernel refused UDP_SEGMENT on this path: " + werr.Error()
		return nil
	}
	if sent > 0 {
		got := lay.datagrams(sent, n)
		s.seq += uint64(got)
		s.in.Messages += int64(got)
		s.in.Bytes += int64(got) * int64(s.spec.Len)
		if s.fl != nil {
			s.fl.sent(s.seq)
		}
	}
	if werr != nil && !isTimeout(werr) {
		return werr
	}
	return nil
}

// finish records what the sender did in side and returns how long it ran.
func (s *udpSender) finish(side *Side, start, now time.Time) time.Duration {
	if s.p != nil {
		// A sender late at the end has its last backlog forgiven too.
		s.p.due(now, 0)
		side.UDP.LateNs = int64(s.p.late)
		if l := lateLimit(time.Duration(s.p.late), now.Sub(start)); l != nil {
			side.LimitedBy = append(side.LimitedBy, *l)
		}
	}
	if s.lay.segs > 1 {
		side.UDP.GSO = s.lay.segs
	}
	side.UDP.NoGSO = s.noGSO
	s.iv.finish(now, s.in)
	side.Intervals = s.iv.list
	side.Messages = int64(s.seq)
	side.Bytes = int64(s.seq) * int64(s.spec.Len)
	side.UDP.Sent = int64(s.seq)
	if s.fl != nil {
		side.UDP.Flow = &s.fl.st
		side.UDP.Foreign = s.fb.foreign
		side.UDP.Truncated = s.fb.truncated
	}
	return now.Sub(start)
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
