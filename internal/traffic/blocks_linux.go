package traffic

import (
	"context"
	"net"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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
	aw := opt.awakeOr(spec, requesterDatagram)
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return blocksRequest(ctx, spec, conn, side, opt, aw)
	})
}

// Respond answers block requests arriving on a connected conn: each valid
// request gets exactly one block of spec.Block bytes (never a size the
// request names), until the requester's end marker, ctx, or spec.Duration
// plus grace. Call it on a thread in the responder's network namespace.
func Respond(ctx context.Context, spec Spec, conn *net.UDPConn, opt Options) *Side {
	side := &Side{Role: RoleResponder, Intervals: []Interval{}, Blocks: &BlockStats{}}
	aw := opt.awakeOr(spec, responderDatagram)
	return runEnd(ctx, spec, conn, side, opt, func(spec Spec) (time.Duration, error) {
		return blocksRespond(ctx, spec, conn, side, opt, aw)
	})
}

// requesterDatagram is the size of the datagrams a requester of spec
// reads (a block's first chunk; the guard's few bytes left out) and
// responderDatagram a responder's (a request).
func requesterDatagram(spec Spec) int {
	_, sizes := chunking(spec.Block, 0)
	return sizes[0]
}

func responderDatagram(spec Spec) int { return max(spec.Request, HeaderLen) }

// blocksEnd is what both ends of a blocks run share in their loops.
type blocksEnd struct {
	spec    Spec
	opt     Options
	pc      batchConn
	st      *BlockStats
	off     int // bytes of the guard's header before ours
	nchunks int // datagrams per block
}

// newBlocksEnd is the end of spec on pc, counting into st, and each chunk's
// datagram size.
func newBlocksEnd(spec Spec, pc batchConn, st *BlockStats, opt Options) (blocksEnd, []int) {
	off := opt.overhead()
	nchunks, sizes := chunking(spec.Block, off)
	return blocksEnd{spec: spec, opt: opt, pc: pc, st: st, off: off, nchunks: nchunks}, sizes
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

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
