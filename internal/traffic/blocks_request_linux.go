package traffic

import (
	"context"
	"net"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// requester is the state of blocksRequest's loop, one per run on its hot
// thread. Its methods are the loop's phases, each called once per turn
// (per batch of datagrams, never per block), so splitting the loop adds
// no call or allocation per block.
type requester struct {
	blocksEnd
	full   uint64 // bitmap of a block's chunks, all received
	slots  []blockSlot
	gens   []uint64 // per slot: requests issued from it (sequence numbers)
	issued []int    // the slots of the requests being issued (issue)
	reqs   []ipv4.Message
	resp   []ipv4.Message
	hist   *hdrhistogram.Histogram // the run's round trips
	ivHist *hdrhistogram.Histogram // the open interval's
	pace   *pacer
	split  *splitRec // nil: the split is off
	// sampling says the requests issued now carry FlagSampling
	// (splitRec.window); flagged that the last ones issued did, so the
	// agent reads the next ones with its stamps.
	sampling, flagged bool
	iv                *intervals
	in                Interval // the open interval's figures
	start             time.Time
	end               time.Time // no request is issued from then on
	now               time.Time // when the last read returned
	// deadline is the read deadline last set on pc.
	deadline time.Time
}

func blocksRequest(ctx context.Context, spec Spec, conn *net.UDPConn, side *Side, opt Options, aw awake) (time.Duration, error) {
	sr := newSplitRec(spec, conn)
	sr.setAwake(aw)
	pc, release := acquireRaw(conn)
	defer release()
	return requestOn(ctx, spec, pc, side, opt, sr)
}

// requestOn is blocksRequest on pc (the benchmarks' in-memory conn),
// splitting the round trips into sr (nil: not).
func requestOn(ctx context.Context, spec Spec, pc batchConn, side *Side, opt Options, sr *splitRec) (time.Duration, error) {
	r, err := newRequester(spec, pc, side.Blocks, opt)
	if err != nil {
		return 0, err
	}
	r.split = sr
	r.flagged = sr != nil // the agent reads the first requests with its stamps
	sr.oob(r.resp)
	for ctx.Err() == nil {
		if r.iv.due(r.now) {
			r.closeInterval(false)
		}
		busy, oldest := r.expire()
		issuing := r.now.Before(r.end)
		// The requests issued now carry FlagSampling inside the sampling
		// window, and the agent reads the requests after them with its
		// stamps; this read is sampled as the agent's read of the
		// requests issued now is: after the last flagged ones.
		r.sampling = r.split.window(&r.spec, r.st.Requests)
		sampled := r.flagged
		if issuing && busy < len(r.slots) && !r.now.Before(r.pace.nextDue()) {
			t := time.Now()
			n, ierr := r.issue(ctx, t)
			if ierr != nil {
				err = ierr
				break
			}
			if n > 0 {
				r.flagged = r.sampling
			}
			busy += n
			if oldest.IsZero() {
				oldest = t
			}
		}
		// The blocks just received go into the split now that the next
		// requests are on their way: off the round trip's path.
		r.split.record()
		if !issuing && busy == 0 {
			break
		}
		r.setDeadline(issuing, busy, oldest)
		r.split.before(r.resp, sampled)
		n, rerr := pc.ReadBatch(r.resp, unix.MSG_WAITFORONE)
		r.now = time.Now()
		if rerr != nil && !isTimeout(rerr) {
			err = rerr
			break
		}
		r.receive(n)
	}
	return r.finish(ctx, side, err)
}

// newRequester lays out the requester's slots and message buffers for
// spec and starts the clock.
func newRequester(spec Spec, pc batchConn, st *BlockStats, opt Options) (*requester, error) {
	e, sizes := newBlocksEnd(spec, pc, st, opt)
	if spec.Request < e.off+HeaderLen || sizes[len(sizes)-1] < e.off+HeaderLen {
		return nil, errorf("blocks: request %d and block %d must hold the %d bytes of headers", spec.Request, spec.Block, e.off+HeaderLen)
	}
	nchunks := e.nchunks
	r := &requester{blocksEnd: e,
		full:   uint64(1)<<nchunks - 1,
		slots:  make([]blockSlot, spec.Outstanding),
		gens:   make([]uint64, spec.Outstanding),
		reqs:   make([]ipv4.Message, min(spec.Outstanding, maxBatch)),
		issued: make([]int, min(spec.Outstanding, maxBatch)),
		// Read at most what can have arrived: the chunks of the blocks in
		// flight. With one block of one datagram in flight, recvmmsg then
		// returns with it instead of trying the queue once more, and the
		// message headers it needs are one.
		resp: make([]ipv4.Message, min(batchFor(sizes[0]), spec.Outstanding*nchunks)),
		hist: newHist(), ivHist: newHist(),
	}
	for i := range r.reqs {
		r.reqs[i].Buffers = [][]byte{make([]byte, spec.Request)}
	}
	for i := range r.resp {
		r.resp[i].Buffers = [][]byte{make([]byte, sizes[0])}
	}
	st.Chunks = nchunks
	r.start = time.Now()
	r.end = r.start.Add(spec.Duration)
	r.now = r.start
	r.pace = newRatePacer(r.start, spec.RequestsPerSec)
	r.iv = newIntervals(r.start, spec.Interval, RoleRequester, opt.Observer)
	return r, nil
}

// closeInterval ends the open interval at now (the run's last when final)
// with its round-trip percentiles.
func (r *requester) closeInterval(final bool) {
	r.in.RTTPercentiles = summarize(r.ivHist)
	if final {
		r.iv.finish(r.now, r.in)
	} else {
		r.iv.close(r.now, r.in)
	}
	r.in = Interval{}
	r.ivHist.Reset()
}

// expire times out the blocks overdue at now (lost) and returns how many
// are still in flight and when the oldest of them was requested.
func (r *requester) expire() (busy int, oldest time.Time) {
	for i := range r.slots {
		s := &r.slots[i]
		if !s.busy {
			continue
		}
		if r.now.Sub(s.sent) >= r.spec.BlockTimeout {
			s.busy = false
			r.st.Lost++
			r.in.LostBlocks++
			continue
		}
		busy++
		if oldest.IsZero() || s.sent.Before(oldest) {
			oldest = s.sent
		}
	}
	return busy, oldest
}

// issue requests a block in each free slot the pacer allows at t (at most
// a batch) and writes the requests, returning how many it counted as sent.
// A request that could not be sealed ends the run (those sealed before it
// still go); cancelling ctx stops the writes.
func (r *requester) issue(ctx context.Context, t time.Time) (int, error) {
	var err error
	n := 0
	for i := range r.slots {
		if r.slots[i].busy || n == len(r.reqs) || !r.pace.take(t) {
			continue
		}
		r.gens[i]++
		seq := r.gens[i]<<slotBits | uint64(i)
		r.slots[i] = blockSlot{seq: seq, sent: t, busy: true}
		r.issued[n] = i
		h := Header{Kind: KindRequest, Seq: seq, Stamp: t.UnixNano(), Size: uint32(r.spec.Block), Chunks: uint16(r.nchunks)}
		if r.sampling {
			h.Flags = FlagSampling
		}
		h.Put(r.reqs[n].Buffers[0][r.off:])
		if err = r.opt.seal(r.reqs[n].Buffers[0]); err != nil {
			break
		}
		n++
	}
	// A round trip runs from the send: the requests are sealed by now,
	// as the blocks are read before they are opened.
	if n > 0 {
		ts := time.Now()
		for _, i := range r.issued[:n] {
			r.slots[i].sent = ts
		}
	}
	for sent := 0; sent < n; {
		w, werr := r.pc.WriteBatch(r.reqs[sent:n], 0)
		sent += w
		if werr != nil && !isTimeout(werr) {
			err = werr
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	r.st.Requests += int64(n)
	return n, nil
}

// setDeadline sets the read deadline to the next thing the loop must do:
// close an interval, time out the oldest block, stop issuing at the end,
// or issue the next paced request.
func (r *requester) setDeadline(issuing bool, busy int, oldest time.Time) {
	dl := r.iv.next
	if !oldest.IsZero() && oldest.Add(r.spec.BlockTimeout).Before(dl) {
		dl = oldest.Add(r.spec.BlockTimeout)
	}
	if issuing && r.end.Before(dl) {
		dl = r.end
	}
	if due := r.pace.nextDue(); issuing && busy < len(r.slots) && !due.IsZero() && due.Before(dl) {
		dl = due
	}
	// Move the deadline only when it must come earlier or has passed:
	// resetting a timer on every round trip costs the runtime work on the
	// measured path. A deadline left earlier than needed only means one
	// more turn of the loop.
	if dl.Before(r.deadline) || !r.now.Before(r.deadline) {
		r.deadline = dl
		r.pc.SetReadDeadline(dl)
	}
}

// receive takes the n responses just read: a chunk completes its block's
// bitmap, and a complete block's round trip is recorded.
func (r *requester) receive(n int) {
	var h Header
	for i := 0; i < n; i++ {
		pkt, _, short := datagram(&r.resp[i])
		if short {
			r.st.Truncated++ // its block times out: lost here, not in the network
			continue
		}
		if len(pkt) < r.off || h.Parse(pkt[r.off:]) != nil || h.Kind != KindResponse || int(h.Chunk) >= r.nchunks || r.opt.open(pkt) != nil {
			r.st.Foreign++
			continue
		}
		idx := h.Seq & (1<<slotBits - 1)
		if idx >= uint64(len(r.slots)) {
			r.st.Foreign++
			continue
		}
		s := &r.slots[idx]
		if !s.busy || s.seq != h.Seq {
			r.st.Late++
			continue
		}
		s.got |= 1 << h.Chunk
		if s.got != r.full {
			continue
		}
		s.busy = false
		rtt := r.now.Sub(s.sent).Nanoseconds()
		if r.split.on() {
			r.split.queue(r.split.stamp(&r.resp[i]), r.now.UnixNano(), rtt, &h)
		}
		r.hist.RecordValue(rtt)
		r.ivHist.RecordValue(rtt)
		r.st.Completed++
		r.in.Messages++
		r.in.Bytes += int64(r.spec.Block)
	}
}

// finish closes the last interval, fills side from the run and tells the
// responder the run is over; err is what ended the loop, if anything.
func (r *requester) finish(ctx context.Context, side *Side, err error) (time.Duration, error) {
	r.closeInterval(true)
	d := r.now.Sub(r.start)
	st := r.st
	side.Intervals = r.iv.list
	side.Messages = st.Completed
	side.Bytes = st.Completed * int64(r.spec.Block)
	st.RTT = summarize(r.hist)
	r.split.record()
	side.Split = r.split.side()
	// Tell the responder we are done (it also stops on its own deadline).
	mk := make([]byte, r.off+HeaderLen)
	(&Header{Kind: KindEnd, Seq: uint64(st.Requests)}).Put(mk[r.off:])
	marker := []ipv4.Message{{Buffers: [][]byte{mk}}}
	for i := 0; i < 2 && ctx.Err() == nil && r.opt.seal(mk) == nil; i++ {
		r.pc.WriteBatch(marker, 0)
	}
	if err != nil {
		return d, errorf("blocks request: %w", err)
	}
	return d, nil
}
