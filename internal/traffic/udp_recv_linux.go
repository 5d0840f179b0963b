package traffic

import (
	"context"
	"net"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

func udpReceive(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	off := opt.overhead()
	if err := enableRxTimestamps(conn); err != nil {
		return 0, errorf("udp: SO_TIMESTAMPNS: %w", err)
	}
	rcvbuf := receiveBuffer(conn)
	pc, release := acquireRaw(conn)
	defer release()
	ms := make([]ipv4.Message, maxBatch)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, max(spec.Len, HeaderLen))}
		ms[i].OOB = make([]byte, oobLen)
	}
	var (
		tr       seqTracker
		jit      jitter
		h        Header
		in       Interval
		iv       *intervals
		start    time.Time
		now      = time.Now()
		hardEnd  = now.Add(startupTimeout)
		bytes    int64
		foreign  int64
		err      error
		ended    bool
		coalesce bool
		last     struct{ lost, reordered, dup uint64 }
	)
	var fb *feedbackOut
	if spec.Flow() {
		fb = newFeedbackOut(flowWindow(rcvbuf, spec.Len, side.MTU), off, now)
	}
	deadline := hardEnd
	pc.SetReadDeadline(deadline)
	for !ended && ctx.Err() == nil && now.Before(hardEnd) {
		if iv != nil && iv.due(now) {
			closeUDPInterval(iv, now, &in, &tr, &jit, &last)
		}
		if iv != nil && !iv.next.Equal(deadline) {
			deadline = iv.next
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
		n, rerr := pc.ReadBatch(ms, unix.MSG_WAITFORONE)
		now = time.Now()
		if rerr != nil && !isTimeout(rerr) && !peerGone(rerr) {
			err = rerr
			break
		}
		coalesce = n > 0 && n < len(ms)/2
		unique := tr.unique
		for i := 0; i < n; i++ {
			m := &ms[i]
			pkt := m.Buffers[0][:m.N]
			if len(pkt) < off || h.Parse(pkt[off:]) != nil || opt.open(pkt) != nil {
				foreign++
				continue
			}
			switch h.Kind {
			case KindEnd:
				ended = true
				continue
			case KindData:
			default:
				foreign++
				continue
			}
			if iv == nil {
				// The receiver's clock starts with the first datagram.
				start = now
				iv = newIntervals(start, spec.Interval, RoleReceiver, nil)
				iv.obs = opt.Observer
				hardEnd = start.Add(spec.Duration + drainGrace)
			}
			before := tr.unique
			tr.add(h.Seq)
			if tr.unique == before {
				continue // duplicate: neither bytes nor jitter
			}
			if at, ok := rxStamp(m.OOB[:m.NN]); ok {
				jit.add(h.Stamp, at)
			} else {
				jit.add(h.Stamp, now.UnixNano())
			}
			in.Messages++
			in.Bytes += int64(m.N)
			bytes += int64(m.N)
		}
		if fb != nil {
			// Feedback only after data arrived since the last: never more
			// bytes out than in.
			fb.unsent += int(tr.unique - unique)
			if fb.due(now, n < len(ms)) {
				fb.send(pc, opt, tr.next, now)
			}
		}
	}
	var d time.Duration
	if iv != nil {
		closeUDPIntervalFinal(iv, now, &in, &tr, &jit, &last)
		side.Intervals = iv.list
		d = now.Sub(start)
	}
	side.Bytes = bytes
	side.Messages = int64(tr.unique)
	side.UDP = &UDPStats{Received: int64(tr.unique), Lost: int64(tr.lost()), Reordered: int64(tr.reordered),
		Duplicates: int64(tr.duplicates), Jitter: jit.ns(), Foreign: foreign, ReceiveBufferBytes: rcvbuf}
	if fb != nil {
		side.UDP.FeedbackSent = fb.sent
	}
	if err != nil {
		return d, errorf("udp receive: %w", err)
	}
	if iv == nil && ctx.Err() == nil && !ended {
		return 0, errorf("udp receive: no datagram within %v", startupTimeout)
	}
	return d, nil
}

func udpInterval(in *Interval, tr *seqTracker, jit *jitter, last *struct{ lost, reordered, dup uint64 }) {
	in.Lost = int64(tr.lost()) - int64(last.lost)
	in.Reordered = int64(tr.reordered - last.reordered)
	in.Duplicates = int64(tr.duplicates - last.dup)
	in.Jitter = jit.ns()
	last.lost, last.reordered, last.dup = tr.lost(), tr.reordered, tr.duplicates
}

func closeUDPInterval(iv *intervals, now time.Time, in *Interval, tr *seqTracker, jit *jitter, last *struct{ lost, reordered, dup uint64 }) {
	udpInterval(in, tr, jit, last)
	iv.close(now, *in)
	*in = Interval{}
}

func closeUDPIntervalFinal(iv *intervals, now time.Time, in *Interval, tr *seqTracker, jit *jitter, last *struct{ lost, reordered, dup uint64 }) {
	udpInterval(in, tr, jit, last)
	iv.finish(now, *in)
}
