package traffic

import (
	"context"
	"net"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// responder is the state of blocksRespond's loop, one per run on its hot
// thread. As the requester's, its methods are called per batch of
// datagrams, never per block.
type responder struct {
	blocksEnd
	sizes []int // each chunk's datagram size
	reqs  []ipv4.Message
	out   []ipv4.Message // the responses waiting to be written: out[:k]
	bufs  [][]byte       // out's buffers at full size
	k     int
	split *splitRec // nil: the split is off
	// stamps holds, per response in out, the kernel's receive stamp of
	// its request (0: none); ends marks the last chunk of a block.
	stamps  []int64
	ends    []bool
	iv      *intervals // nil until the first request
	in      Interval   // the open interval's figures
	start   time.Time  // the first request's arrival
	now     time.Time  // when the last read returned
	hardEnd time.Time  // the run ends then, whatever arrives
	// deadline is the read deadline last set on pc.
	deadline time.Time
	ended    bool  // the requester's end marker arrived
	err      error // what ended the run, if anything
}

func blocksRespond(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options, aw awake) (time.Duration, error) {
	sr := newSplitRec(spec, conn)
	sr.setAwake(aw)
	pc, release := acquireRaw(conn)
	defer release()
	return respondOn(ctx, spec, pc, side, opt, sr)
}

// respondOn is blocksRespond on pc (the benchmarks' in-memory conn),
// recording its parts of the round trips in sr (nil: not).
func respondOn(ctx context.Context, spec Spec, pc batchConn, side *Side, opt Options, sr *splitRec) (time.Duration, error) {
	r := newResponder(spec, pc, side.Blocks, opt)
	r.split = sr
	sr.oob(r.reqs)
	pc.SetReadDeadline(r.deadline)
	for !r.ended && r.err == nil && ctx.Err() == nil && r.now.Before(r.hardEnd) {
		if r.iv != nil {
			if r.iv.due(r.now) {
				r.iv.close(r.now, r.in)
				r.in = Interval{}
			}
			if dl := earliest(r.iv.next, r.hardEnd); !dl.Equal(r.deadline) {
				r.deadline = dl
				pc.SetReadDeadline(dl)
			}
		}
		r.split.before(r.reqs, r.split.follows(&r.spec))
		n, rerr := pc.ReadBatch(r.reqs, unix.MSG_WAITFORONE)
		r.now = time.Now()
		if rerr != nil && !isTimeout(rerr) {
			r.err = rerr
			break
		}
		r.answer(ctx, n)
		r.flush(ctx)
	}
	return r.finish(ctx, side)
}

// newResponder lays out the responder's message buffers for spec; until
// the first request it waits startupTimeout.
func newResponder(spec Spec, pc batchConn, st *BlockStats, opt Options) *responder {
	e, sizes := newBlocksEnd(spec, pc, st, opt)
	r := &responder{blocksEnd: e, sizes: sizes,
		// At most spec.Outstanding requests can be waiting (see blocksRequest).
		reqs: make([]ipv4.Message, min(maxBatch, spec.Outstanding)),
		out:  make([]ipv4.Message, max(batchFor(sizes[0]), 1)),
	}
	for i := range r.reqs {
		r.reqs[i].Buffers = [][]byte{make([]byte, max(spec.Request, HeaderLen))}
	}
	r.stamps, r.ends = make([]int64, len(r.out)), make([]bool, len(r.out))
	r.bufs = make([][]byte, len(r.out))
	for i := range r.out {
		r.bufs[i] = make([]byte, sizes[0])
		r.out[i].Buffers = [][]byte{r.bufs[i]}
	}
	st.Chunks = e.nchunks
	r.now = time.Now()
	r.hardEnd = r.now.Add(startupTimeout)
	r.deadline = r.hardEnd
	return r
}

// answer takes the n datagrams just read: each valid request gets its
// block's chunks queued in out (written whenever out fills); the end
// marker ends the run after this batch.
func (r *responder) answer(ctx context.Context, n int) {
	var h, q Header
	st := r.st
	// sampling says a request of this batch had FlagSampling; a batch
	// without requests (a read that ended at a deadline) changes nothing.
	sampling, asked := false, false
	defer func() {
		if asked {
			r.split.followNext(sampling)
		}
	}()
	for i := 0; i < n; i++ {
		pkt, size, short := datagram(&r.reqs[i])
		if short {
			st.Truncated++ // not a request as sent: no block for it
			continue
		}
		if len(pkt) < r.off || q.Parse(pkt[r.off:]) != nil || r.opt.open(pkt) != nil {
			if !r.opt.hello(pkt) {
				st.Foreign++
			}
			continue
		}
		if q.Kind == KindEnd {
			r.ended = true
			continue
		}
		// Answer only well-formed requests for the agreed block size.
		if q.Kind != KindRequest || int(q.Size) != r.spec.Block || size != r.spec.Request {
			st.Foreign++
			continue
		}
		if r.iv == nil {
			r.start = r.now
			r.iv = newIntervals(r.start, r.spec.Interval, RoleResponder, r.opt.Observer)
			r.hardEnd = r.start.Add(r.spec.Duration + r.spec.BlockTimeout + drainGrace)
		}
		st.Requests++
		sampling, asked = sampling || q.Flags&FlagSampling != 0, true
		var at int64
		if r.split.on() {
			at = r.split.stamp(&r.reqs[i])
		}
		h = Header{Kind: KindResponse, Seq: q.Seq, Stamp: q.Stamp, Size: q.Size, Chunks: uint16(r.nchunks)}
		for c := 0; c < r.nchunks; c++ {
			h.Chunk = uint16(c)
			b := r.bufs[r.k][:r.sizes[c]]
			h.Put(b[r.off:])
			if r.err = r.opt.seal(b); r.err != nil {
				break
			}
			r.out[r.k].Buffers[0] = b
			r.stamps[r.k], r.ends[r.k] = at, c == r.nchunks-1
			r.k++
			if r.k == len(r.out) {
				r.flush(ctx)
			}
		}
		st.Completed++
		r.in.Messages++
		r.in.Bytes += int64(r.spec.Block)
	}
}

// flush writes the k responses queued in out, after the guard's wait (the
// agent's send rate limit); after an error it drops them.
func (r *responder) flush(ctx context.Context) {
	if r.k > 0 && r.err == nil {
		bytes := 0
		for i := 0; i < r.k; i++ {
			bytes += len(r.out[i].Buffers[0])
		}
		r.err = r.opt.wait(ctx, bytes)
	}
	var sendAt time.Time
	if r.split.on() && r.k > 0 && r.err == nil {
		sendAt = r.hold()
	}
	for sent := 0; sent < r.k && r.err == nil && ctx.Err() == nil; {
		w, werr := r.pc.WriteBatch(r.out[sent:r.k], 0)
		sent += w
		if werr != nil && !isTimeout(werr) {
			r.err = werr
		}
	}
	if !sendAt.IsZero() {
		r.record(sendAt)
	}
	r.k = 0
}

// hold writes into each queued response how long its request was held,
// from its stamp to now (just before the send), which it returns.
func (r *responder) hold() time.Time {
	now := time.Now()
	ns := now.UnixNano()
	for i := 0; i < r.k; i++ {
		r.split.held(r.out[i].Buffers[0], r.off, r.stamps[i], ns)
	}
	return now
}

// record adds, after the send (off the round trip's path), each queued
// block's wake-up (its request's stamp to the read) and work (the read to
// sendAt).
func (r *responder) record(sendAt time.Time) {
	read := r.now.UnixNano()
	work := max(sendAt.Sub(r.now).Nanoseconds(), 0)
	for i := 0; i < r.k; i++ {
		if r.ends[i] {
			r.split.woke(r.stamps[i], read)
			r.split.work.RecordValue(work)
		}
	}
}

// finish closes the last interval and fills side from the run.
func (r *responder) finish(ctx context.Context, side *Side) (time.Duration, error) {
	var d time.Duration
	if r.iv != nil {
		r.iv.finish(r.now, r.in)
		side.Intervals = r.iv.list
		d = r.now.Sub(r.start)
	}
	side.Messages = r.st.Completed
	side.Bytes = r.st.Completed * int64(r.spec.Block)
	side.Split = r.split.side()
	if r.err != nil {
		return d, errorf("blocks respond: %w", r.err)
	}
	if r.iv == nil && ctx.Err() == nil {
		return 0, errorf("blocks respond: no request within %v", startupTimeout)
	}
	return d, nil
}
