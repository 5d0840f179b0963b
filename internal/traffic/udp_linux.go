package traffic

import (
	"context"
	"net"
	"time"
)

// udpBuffer is the socket buffer size of UDP ends: Oracle's preinstall
// rmem_max (Oracle's preinstall value; docs/sources.md), what a tuned interconnect host allows.
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
