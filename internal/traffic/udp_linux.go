package traffic

import (
	"context"
	"errors"
	"net"
	"time"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// udpBuffer is the socket buffer size of UDP ends: Oracle's preinstall
// rmem_max (DOMAIN.md section 6), what a tuned interconnect host allows.
const udpBuffer = 4 << 20

// maxBatch is the most datagrams per sendmmsg/recvmmsg call; batchBytes
// caps a batch's payload so large datagrams do not make huge bursts.
const (
	maxBatch   = 64
	batchBytes = 512 << 10
)

func batchFor(size int) int { return max(1, min(maxBatch, batchBytes/max(size, 1))) }

// coalesceSleep is how long a UDP receiver lets datagrams gather when it
// found its queue nearly empty.
const coalesceSleep = 200 * time.Microsecond

// endMarkerDelays are when the sender repeats its end marker after the last
// datagram: a marker stuck behind a full queue is lost like data, a later
// one finds the queue drained.
var endMarkerDelays = []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond}

// SendUDP sends numbered spec.Len-byte datagrams on a connected conn for
// spec.Duration, paced to spec.RateBitsPerSec (payload bits; unpaced when
// zero) in sendmmsg batches, then end markers carrying the count sent. Call
// it on a thread in the sender's network namespace.
func SendUDP(ctx context.Context, spec Spec, conn *net.UDPConn, opt Options) *Side {
	side := &Side{Role: RoleSender, Intervals: []Interval{}, UDP: &UDPStats{}}
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return udpSend(ctx, spec, conn, side, opt)
	})
}

// ReceiveUDP counts the numbered datagrams arriving on a connected conn
// until the sender's end marker, ctx, or spec.Duration plus a grace period;
// loss, reordering and duplicates come from the numbers, jitter from the
// senders' stamps and kernel receive times. Call it on a thread in the
// receiver's network namespace.
func ReceiveUDP(ctx context.Context, spec Spec, conn *net.UDPConn, opt Options) *Side {
	side := &Side{Role: RoleReceiver, Intervals: []Interval{}, UDP: &UDPStats{}}
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return udpReceive(ctx, spec, conn, side, opt)
	})
}

// runEnd is the frame of a single-threaded end: normalise the spec, meter
// the namespace, run the hot loop on its own locked thread, collect cost.
func runEnd(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options, hot func(Spec) (time.Duration, error)) *Side {
	spec, m, ok := begin(spec, side, opt)
	if !ok {
		return side
	}
	if err := blockingIO(conn); err != nil {
		side.Error = errorf("udp: %w", err).Error()
		return side
	}
	if err := setBuffers(conn, udpBuffer, udpBuffer); err != nil {
		side.Error = errorf("udp: socket buffers: %w", err).Error()
		return side
	}
	side.MTU = pathMTU(conn)
	stop := cancelOnDone(ctx, conn)
	defer stop()
	var d time.Duration
	r := <-startThread(spec.CPU, func() error {
		var err error
		d, err = hot(spec)
		return err
	})
	side.Duration = d
	side.CPU = CPU{Threads: 1, UserNs: int64(r.user), SystemNs: int64(r.sys), Pinned: spec.CPU}
	if r.err != nil {
		side.Error = r.err.Error()
	}
	m.finish(ctx, side)
	return side
}

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
	lay := newSendLayout(spec.Len, mtu)
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
			lay = newSendLayout(spec.Len, 0)
			now = time.Now()
			continue
		}
		if sent > 0 {
			got := lay.datagrams(sent, n)
			seq += uint64(got)
			in.Messages += int64(got)
			in.Bytes += int64(got) * int64(spec.Len)
		}
		if werr != nil && !isTimeout(werr) {
			err = werr
			break
		}
		now = time.Now()
	}
	if lay.segs > 1 {
		side.UDP.GSO = lay.segs
	}
	iv.finish(now, in)
	d := now.Sub(start)
	side.Intervals = iv.list
	side.Messages = int64(seq)
	side.Bytes = int64(seq) * int64(spec.Len)
	side.UDP.Sent = int64(seq)
	if err != nil {
		return d, errorf("udp send: %w", err)
	}
	// End markers: bounded, and skipped when cancelled (the receiver is
	// being cancelled too).
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
	return d, nil
}

func udpReceive(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	off := opt.overhead()
	if err := enableRxTimestamps(conn); err != nil {
		return 0, errorf("udp: SO_TIMESTAMPNS: %w", err)
	}
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
		if rerr != nil && !isTimeout(rerr) {
			err = rerr
			break
		}
		coalesce = n > 0 && n < len(ms)/2
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
		Duplicates: int64(tr.duplicates), Jitter: jit.ns(), Foreign: foreign}
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

// sendLayout places a sender's datagrams in its sendmmsg messages. When a
// datagram fits the path MTU, each message carries up to segs datagrams
// back to back with a UDP_SEGMENT control message (UDP GSO, Linux 4.18):
// the kernel cuts them into datagrams of exactly len bytes, so the stack
// above the device runs once per message instead of once per datagram,
// which is what bounds a small-datagram rate. Larger datagrams (which IP
// fragments, the point of the exercise) go one per message, in batches
// whose fragments stay within one softirq budget.
type sendLayout struct {
	len, segs int
	ms        []ipv4.Message
	full      [][]byte
}

// gsoMaxSegs is UDP_MAX_SEGMENTS of older kernels.
const gsoMaxSegs = 64

func newSendLayout(size, mtu int) *sendLayout {
	l := &sendLayout{len: size, segs: 1}
	msgs := batchFor(size)
	switch k := PacketsPerDatagram(size, mtu); {
	case k == 1:
		l.segs = min(gsoMaxSegs, MaxDatagram/size)
		msgs = max(1, min(8, batchBytes/(l.segs*size)))
	case k > 1:
		// Keep a call's fragments within one softirq budget (64 packets
		// per NAPI poll): a larger burst leaves receive work to ksoftirqd
		// and overflows queues on the way.
		msgs = max(1, min(msgs, maxBatch/k))
	}
	l.ms = make([]ipv4.Message, msgs)
	l.full = make([][]byte, msgs)
	for i := range l.ms {
		l.full[i] = make([]byte, l.segs*size)
		l.ms[i].Buffers = [][]byte{l.full[i]}
		if l.segs > 1 {
			l.ms[i].OOB = gsoCmsg(size)
		}
	}
	return l
}

func (l *sendLayout) capacity() int { return len(l.ms) * l.segs }

// slot is the buffer of the i-th datagram of a batch.
func (l *sendLayout) slot(i int) []byte {
	m, j := i/l.segs, i%l.segs
	return l.full[m][j*l.len : (j+1)*l.len]
}

// fill sizes the messages for n datagrams and returns how many are used.
func (l *sendLayout) fill(n int) int {
	msgs := (n + l.segs - 1) / l.segs
	for m := 0; m < msgs; m++ {
		k := min(l.segs, n-m*l.segs)
		l.ms[m].Buffers[0] = l.full[m][:k*l.len]
	}
	return msgs
}

// datagrams is how many of n datagrams the first sent messages held.
func (l *sendLayout) datagrams(sent, n int) int { return min(sent*l.segs, n) }

func gsoCmsg(size int) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&b[unix.CmsgLen(0)])) = uint16(size)
	return b
}

// gsoRefused reports an error that means UDP GSO is not available.
func gsoRefused(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EIO) || errors.Is(err, unix.ENOPROTOOPT) || errors.Is(err, unix.EOPNOTSUPP)
}
