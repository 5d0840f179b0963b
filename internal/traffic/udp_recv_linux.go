package traffic

import (
	"context"
	"net"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// udpRecv is a UDP receiver's accounting while it runs.
type udpRecv struct {
	spec      Spec
	off       int
	opt       Options
	tr        seqTracker
	jit       jitter
	h         Header
	in        Interval
	iv        *intervals
	start     time.Time
	hardEnd   time.Time
	bytes     int64
	foreign   int64
	truncated int64
	ended     bool
	last      struct{ lost, reordered, dup uint64 }
}

func udpReceive(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	if err := enableRxTimestamps(conn); err != nil {
		return 0, errorf("udp: SO_TIMESTAMPNS: %w", err)
	}
	rcvbuf := receiveBuffer(conn)
	pc, release := acquireRaw(conn)
	defer release()
	ms := recvBatch(max(spec.Len, HeaderLen))
	now := time.Now()
	r := &udpRecv{spec: spec, off: opt.overhead(), opt: opt, hardEnd: now.Add(startupTimeout)}
	var (
		err      error
		coalesce bool
	)
	var fb *feedbackOut
	if spec.Flow() {
		fb = newFeedbackOut(flowWindow(rcvbuf, spec.Len, side.MTU), r.off, now)
	}
	deadline := r.hardEnd
	pc.SetReadDeadline(deadline)
	for !r.ended && ctx.Err() == nil && now.Before(r.hardEnd) {
		if r.iv != nil && r.iv.due(now) {
			r.closeInterval(now, false)
		}
		if r.iv != nil && !r.iv.next.Equal(deadline) {
			deadline = r.iv.next
			pc.SetReadDeadline(deadline)
		}
		if coalesce {
			// The last call found the queue nearly empty: let datagrams
			// gather instead of being woken for each. A sender that finds
			// the receiver asleep in the socket's wait queue pays a wake-up
			// (an IPI, a VM exit) per datagram, which caps small-datagram
			// rates far below what the path carries. Arrival times come
			// from the kernel (SO_TIMESTAMPNS), so jitter is unaffected;
			// the socket buffer holds milliseconds of traffic.
			nanosleep(coalesceSleep)
		}
		n, rerr := pc.ReadBatch(ms, unix.MSG_WAITFORONE|readRealLength)
		now = time.Now()
		if rerr != nil && !isTimeout(rerr) && !peerGone(rerr) {
			err = rerr
			break
		}
		coalesce = n > 0 && n < len(ms)/2
		arrived := r.tr.unique + r.tr.unread
		for i := 0; i < n; i++ {
			r.take(&ms[i], now)
		}
		if fb != nil {
			// Feedback only after data arrived since the last: never more
			// bytes out than in. Datagrams that arrived joined count: the
			// sender must not wait for them.
			fb.unsent += int(r.tr.unique + r.tr.unread - arrived)
			if fb.due(now, n < len(ms)) {
				fb.send(pc, opt, r.tr.next, now)
			}
		}
	}
	d := r.finish(side, now, rcvbuf, fb)
	if err != nil {
		return d, errorf("udp receive: %w", err)
	}
	if r.iv == nil && ctx.Err() == nil && !r.ended {
		return 0, errorf("udp receive: no datagram within %v", startupTimeout)
	}
	return d, nil
}

// recvBatch is a batch of messages to read datagrams of up to size bytes
// into, with room for their arrival time.
func recvBatch(size int) []ipv4.Message {
	ms := make([]ipv4.Message, maxBatch)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, size)}
		ms[i].OOB = make([]byte, oobLen)
	}
	return ms
}

// finish records what the receiver counted in side (with its socket
// buffer's size and the feedback it sent, fb nil when none) and returns
// how long it received, from the first datagram.
func (r *udpRecv) finish(side *Side, now time.Time, rcvbuf int, fb *feedbackOut) time.Duration {
	var d time.Duration
	if r.iv != nil {
		r.closeInterval(now, true)
		side.Intervals = r.iv.list
		d = now.Sub(r.start)
	}
	side.Bytes = r.bytes
	side.Messages = int64(r.tr.unique)
	side.UDP = &UDPStats{Received: int64(r.tr.unique), Lost: int64(r.tr.lost()), Reordered: int64(r.tr.reordered),
		Duplicates: int64(r.tr.duplicates), Jitter: r.jit.ns(), Foreign: r.foreign, ReceiveBufferBytes: rcvbuf,
		Truncated: r.truncated, Joined: int64(r.tr.unread)}
	if fb != nil {
		side.UDP.FeedbackSent = fb.sent
	}
	return d
}

// take accounts one received message.
func (r *udpRecv) take(m *ipv4.Message, now time.Time) {
	pkt, size, short := datagram(m)
	if short {
		r.truncated++
		r.in.Truncated++
		// A whole buffer the sending kernel did not segment: its
		// datagrams are accounted, neither received nor lost.
		if k, first := joinedIn(pkt, size, r.spec.Len); k > 0 && r.ours(first) && r.h.Kind == KindData {
			r.begin(now)
			r.tr.addUnread(r.h.Seq, uint64(k))
		}
		return
	}
	if !r.ours(pkt) {
		if !r.opt.hello(pkt) {
			r.foreign++
		}
		return
	}
	switch r.h.Kind {
	case KindEnd:
		r.ended = true
		return
	case KindData:
	default:
		r.foreign++
		return
	}
	r.begin(now)
	before := r.tr.unique
	r.tr.add(r.h.Seq)
	if r.tr.unique == before {
		return // duplicate: neither bytes nor jitter
	}
	if at, ok := rxStamp(m.OOB[:m.NN]); ok {
		r.jit.add(r.h.Stamp, at)
	} else {
		r.jit.add(r.h.Stamp, now.UnixNano())
	}
	r.in.Messages++
	r.in.Bytes += int64(m.N)
	r.bytes += int64(m.N)
}

// ours parses pkt's header into r.h and says whether it is this run's.
func (r *udpRecv) ours(pkt []byte) bool {
	return len(pkt) >= r.off && r.h.Parse(pkt[r.off:]) == nil && r.opt.open(pkt) == nil
}

// begin starts the receiver's clock with the first datagram of the run.
func (r *udpRecv) begin(now time.Time) {
	if r.iv != nil {
		return
	}
	r.start = now
	r.iv = newIntervals(r.start, r.spec.Interval, RoleReceiver, nil)
	r.iv.obs = r.opt.Observer
	r.hardEnd = r.start.Add(r.spec.Duration + drainGrace)
}

// closeInterval closes the current interval (the last one when final) with
// the gaps, reordering and duplicates that opened in it.
func (r *udpRecv) closeInterval(now time.Time, final bool) {
	tr := &r.tr
	r.in.Lost = int64(tr.lost()) - int64(r.last.lost)
	r.in.Reordered = int64(tr.reordered - r.last.reordered)
	r.in.Duplicates = int64(tr.duplicates - r.last.dup)
	r.in.Jitter = r.jit.ns()
	r.last.lost, r.last.reordered, r.last.dup = tr.lost(), tr.reordered, tr.duplicates
	if final {
		r.iv.finish(now, r.in)
		return
	}
	r.iv.close(now, r.in)
	r.in = Interval{}
}
