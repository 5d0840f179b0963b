package traffic

import (
	"context"
	"net"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/latency"
)

// slotBits is how many low bits of a request's sequence number name its
// slot (MaxOutstanding slots), so a response finds its request directly and
// a stale response (its slot reused since) is recognised.
const slotBits = 10

// Request runs the requesting side of the blocks mode on a connected conn:
// it keeps spec.Outstanding requests of spec.Request bytes in flight, each
// answered by a spec.Block-byte block (in one or more datagrams), for
// spec.Duration, recording each block's round trip. A block not complete
// within spec.BlockTimeout is lost. Call it on a thread in the requester's
// network namespace.
func Request(ctx context.Context, spec Spec, conn *net.UDPConn, opt Options) *Side {
	side := &Side{Role: RoleRequester, Intervals: []Interval{}, Blocks: &BlockStats{}}
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return blocksRequest(ctx, spec, conn, side, opt)
	})
}

// Respond answers block requests arriving on a connected conn: each valid
// request gets exactly one block of spec.Block bytes (never a size the
// request names), until the requester's end marker, ctx, or spec.Duration
// plus grace. Call it on a thread in the responder's network namespace.
func Respond(ctx context.Context, spec Spec, conn *net.UDPConn, opt Options) *Side {
	side := &Side{Role: RoleResponder, Intervals: []Interval{}, Blocks: &BlockStats{}}
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return blocksRespond(ctx, spec, conn, side, opt)
	})
}

type blockSlot struct {
	seq  uint64
	sent time.Time
	got  uint64 // bitmap of chunks received (a 1 MiB block is 17)
	busy bool
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Minute), 3) }

func summarize(h *hdrhistogram.Histogram) *Latency {
	if h.TotalCount() == 0 {
		return nil
	}
	s := latency.FromHistogram(h, 1)
	return &s
}

func blocksRequest(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	pc, release := acquireRaw(conn)
	defer release()
	off := opt.overhead()
	nchunks, sizes := chunking(spec.Block, off)
	if spec.Request < off+HeaderLen || sizes[len(sizes)-1] < off+HeaderLen {
		return 0, errorf("blocks: request %d and block %d must hold the %d bytes of headers", spec.Request, spec.Block, off+HeaderLen)
	}
	full := uint64(1)<<nchunks - 1
	slots := make([]blockSlot, spec.Outstanding)
	gens := make([]uint64, spec.Outstanding)
	reqs := make([]ipv4.Message, min(spec.Outstanding, maxBatch))
	for i := range reqs {
		reqs[i].Buffers = [][]byte{make([]byte, spec.Request)}
	}
	// Read at most what can have arrived: the chunks of the blocks in
	// flight. With one block of one datagram in flight, recvmmsg then
	// returns with it instead of trying the queue once more, and the
	// message headers it needs are one.
	resp := make([]ipv4.Message, min(batchFor(sizes[0]), spec.Outstanding*nchunks))
	for i := range resp {
		resp[i].Buffers = [][]byte{make([]byte, sizes[0])}
	}
	hist, ivHist := newHist(), newHist()
	st := side.Blocks
	st.Chunks = nchunks
	start := time.Now()
	end := start.Add(spec.Duration)
	pace := newRatePacer(start, spec.RequestsPerSec)
	iv := newIntervals(start, spec.Interval, RoleRequester, opt.Observer)
	var (
		in       Interval
		h        Header
		deadline time.Time
		err      error
		now      = start
	)
	closeIv := func(final bool) {
		in.RTTPercentiles = summarize(ivHist)
		if final {
			iv.finish(now, in)
		} else {
			iv.close(now, in)
		}
		in = Interval{}
		ivHist.Reset()
	}
	for ctx.Err() == nil {
		if iv.due(now) {
			closeIv(false)
		}
		// Time out overdue blocks; find the oldest one still in flight.
		busy := 0
		oldest := time.Time{}
		for i := range slots {
			s := &slots[i]
			if !s.busy {
				continue
			}
			if now.Sub(s.sent) >= spec.BlockTimeout {
				s.busy = false
				st.Lost++
				in.LostBlocks++
				continue
			}
			busy++
			if oldest.IsZero() || s.sent.Before(oldest) {
				oldest = s.sent
			}
		}
		issuing := now.Before(end)
		if issuing && busy < len(slots) && !now.Before(pace.nextDue()) {
			n := 0
			t := time.Now()
			for i := range slots {
				if slots[i].busy || n == len(reqs) || !pace.take(t) {
					continue
				}
				gens[i]++
				seq := gens[i]<<slotBits | uint64(i)
				slots[i] = blockSlot{seq: seq, sent: t, busy: true}
				(&Header{Kind: KindRequest, Seq: seq, Stamp: t.UnixNano(), Size: uint32(spec.Block), Chunks: uint16(nchunks)}).Put(reqs[n].Buffers[0][off:])
				if err = opt.seal(reqs[n].Buffers[0]); err != nil {
					break
				}
				n++
			}
			for off := 0; off < n; {
				w, werr := pc.WriteBatch(reqs[off:n], 0)
				off += w
				if werr != nil && !isTimeout(werr) {
					err = werr
					break
				}
				if ctx.Err() != nil {
					break
				}
			}
			if err != nil {
				break
			}
			st.Requests += int64(n)
			busy += n
			if oldest.IsZero() {
				oldest = t
			}
		}
		if !issuing && busy == 0 {
			break
		}
		dl := iv.next
		if !oldest.IsZero() && oldest.Add(spec.BlockTimeout).Before(dl) {
			dl = oldest.Add(spec.BlockTimeout)
		}
		if issuing && end.Before(dl) {
			dl = end
		}
		if due := pace.nextDue(); issuing && busy < len(slots) && !due.IsZero() && due.Before(dl) {
			dl = due
		}
		// Move the deadline only when it must come earlier or has passed:
		// resetting a timer on every round trip costs the runtime work on
		// the measured path. A deadline left earlier than needed only
		// means one more turn of this loop.
		if dl.Before(deadline) || !now.Before(deadline) {
			deadline = dl
			pc.SetReadDeadline(dl)
		}
		n, rerr := pc.ReadBatch(resp, unix.MSG_WAITFORONE)
		now = time.Now()
		if rerr != nil && !isTimeout(rerr) {
			err = rerr
			break
		}
		for i := 0; i < n; i++ {
			pkt, _, short := datagram(&resp[i])
			if short {
				st.Truncated++ // its block times out: lost here, not in the network
				continue
			}
			if len(pkt) < off || h.Parse(pkt[off:]) != nil || h.Kind != KindResponse || int(h.Chunk) >= nchunks || opt.open(pkt) != nil {
				st.Foreign++
				continue
			}
			idx := h.Seq & (1<<slotBits - 1)
			if idx >= uint64(len(slots)) {
				st.Foreign++
				continue
			}
			s := &slots[idx]
			if !s.busy || s.seq != h.Seq {
				st.Late++
				continue
			}
			s.got |= 1 << h.Chunk
			if s.got != full {
				continue
			}
			s.busy = false
			rtt := now.Sub(s.sent).Nanoseconds()
			hist.RecordValue(rtt)
			ivHist.RecordValue(rtt)
			st.Completed++
			in.Messages++
			in.Bytes += int64(spec.Block)
		}
	}
	closeIv(true)
	d := now.Sub(start)
	side.Intervals = iv.list
	side.Messages = st.Completed
	side.Bytes = st.Completed * int64(spec.Block)
	st.RTT = summarize(hist)
	// Tell the responder we are done (it also stops on its own deadline).
	mk := make([]byte, off+HeaderLen)
	(&Header{Kind: KindEnd, Seq: uint64(st.Requests)}).Put(mk[off:])
	marker := []ipv4.Message{{Buffers: [][]byte{mk}}}
	for i := 0; i < 2 && ctx.Err() == nil && opt.seal(mk) == nil; i++ {
		pc.WriteBatch(marker, 0)
	}
	if err != nil {
		return d, errorf("blocks request: %w", err)
	}
	return d, nil
}

func blocksRespond(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options) (time.Duration, error) {
	pc, release := acquireRaw(conn)
	defer release()
	off := opt.overhead()
	nchunks, sizes := chunking(spec.Block, off)
	// At most spec.Outstanding requests can be waiting (see blocksRequest).
	reqs := make([]ipv4.Message, min(maxBatch, spec.Outstanding))
	for i := range reqs {
		reqs[i].Buffers = [][]byte{make([]byte, max(spec.Request, HeaderLen))}
	}
	out := make([]ipv4.Message, max(batchFor(sizes[0]), 1))
	bufs := make([][]byte, len(out))
	for i := range out {
		bufs[i] = make([]byte, sizes[0])
		out[i].Buffers = [][]byte{bufs[i]}
	}
	st := side.Blocks
	st.Chunks = nchunks
	var (
		h, r     Header
		in       Interval
		iv       *intervals
		start    time.Time
		now      = time.Now()
		hardEnd  = now.Add(startupTimeout)
		deadline = hardEnd
		ended    bool
		err      error
		k        int
	)
	pc.SetReadDeadline(deadline)
	flush := func() {
		if k > 0 && err == nil {
			bytes := 0
			for i := 0; i < k; i++ {
				bytes += len(out[i].Buffers[0])
			}
			err = opt.wait(ctx, bytes)
		}
		for sent := 0; sent < k && err == nil && ctx.Err() == nil; {
			w, werr := pc.WriteBatch(out[sent:k], 0)
			sent += w
			if werr != nil && !isTimeout(werr) {
				err = werr
			}
		}
		k = 0
	}
	for !ended && err == nil && ctx.Err() == nil && now.Before(hardEnd) {
		if iv != nil {
			if iv.due(now) {
				iv.close(now, in)
				in = Interval{}
			}
			if dl := earliest(iv.next, hardEnd); !dl.Equal(deadline) {
				deadline = dl
				pc.SetReadDeadline(dl)
			}
		}
		n, rerr := pc.ReadBatch(reqs, unix.MSG_WAITFORONE)
		now = time.Now()
		if rerr != nil && !isTimeout(rerr) {
			err = rerr
			break
		}
		for i := 0; i < n; i++ {
			pkt, size, short := datagram(&reqs[i])
			if short {
				st.Truncated++ // not a request as sent: no block for it
				continue
			}
			if len(pkt) < off || r.Parse(pkt[off:]) != nil || opt.open(pkt) != nil {
				st.Foreign++
				continue
			}
			if r.Kind == KindEnd {
				ended = true
				continue
			}
			// Answer only well-formed requests for the agreed block size.
			if r.Kind != KindRequest || int(r.Size) != spec.Block || size != spec.Request {
				st.Foreign++
				continue
			}
			if iv == nil {
				start = now
				iv = newIntervals(start, spec.Interval, RoleResponder, opt.Observer)
				hardEnd = start.Add(spec.Duration + spec.BlockTimeout + drainGrace)
			}
			st.Requests++
			h = Header{Kind: KindResponse, Seq: r.Seq, Stamp: r.Stamp, Size: r.Size, Chunks: uint16(nchunks)}
			for c := 0; c < nchunks; c++ {
				h.Chunk = uint16(c)
				b := bufs[k][:sizes[c]]
				h.Put(b[off:])
				if err = opt.seal(b); err != nil {
					break
				}
				out[k].Buffers[0] = b
				k++
				if k == len(out) {
					flush()
				}
			}
			st.Completed++
			in.Messages++
			in.Bytes += int64(spec.Block)
		}
		flush()
	}
	var d time.Duration
	if iv != nil {
		iv.finish(now, in)
		side.Intervals = iv.list
		d = now.Sub(start)
	}
	side.Messages = st.Completed
	side.Bytes = st.Completed * int64(spec.Block)
	if err != nil {
		return d, errorf("blocks respond: %w", err)
	}
	if iv == nil && ctx.Err() == nil {
		return 0, errorf("blocks respond: no request within %v", startupTimeout)
	}
	return d, nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
