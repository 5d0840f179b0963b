package traffic

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// startupTimeout is how long a receiving end waits for the first byte.
const startupTimeout = 5 * time.Second

// drainGrace is how long past the spec's duration a receiving end keeps
// listening before it gives up on the sender's end of stream.
const drainGrace = 3 * time.Second

// SendTCP writes spec.Len-byte buffers on every conn for spec.Duration, one
// locked thread per stream, then closes the write side and waits for the
// receiver to close. Call it on a thread in the sender's network namespace.
// What was measured is returned even when ctx is cancelled or a stream fails
// (Side.Error says why).
func SendTCP(ctx context.Context, spec Spec, conns []*net.TCPConn, opt Options) *Side {
	return runTCP(ctx, spec, conns, RoleSender, opt)
}

// ReceiveTCP reads every conn until the sender closes it (or spec.Duration
// plus a grace period passes), one locked thread per stream. Call it on a
// thread in the receiver's network namespace.
func ReceiveTCP(ctx context.Context, spec Spec, conns []*net.TCPConn, opt Options) *Side {
	return runTCP(ctx, spec, conns, RoleReceiver, opt)
}

// tcpRun is one TCP end while it runs: its streams, what their threads
// counted, and what the interval sampler saw last.
type tcpRun struct {
	spec    Spec
	role    Role
	ends    []tcpEnd
	bytes   []atomic.Int64
	started atomic.Int64 // unix ns of the first byte (receiver)
	last    struct{ bytes, retrans int64 }
}

func runTCP(ctx context.Context, spec Spec, conns []*net.TCPConn, role Role, opt Options) *Side {
	side := &Side{Role: role, Intervals: []Interval{}}
	spec, m, ok := begin(spec, side, opt)
	if !ok {
		return side
	}
	dcs := make([]interface{ SetDeadline(time.Time) error }, len(conns))
	for i, c := range conns {
		if err := blockingIO(c); err != nil {
			side.Error = errorf("tcp: %w", err).Error()
			return side
		}
		dcs[i] = c
	}
	stopWatch := cancelOnDone(ctx, dcs...)
	defer stopWatch()

	r := &tcpRun{spec: spec, role: role, ends: make([]tcpEnd, len(conns)), bytes: make([]atomic.Int64, len(conns))}
	start := time.Now()
	end := start.Add(spec.Duration)
	if role == RoleReceiver {
		end = end.Add(drainGrace + startupTimeout)
	}
	results := make([]<-chan threadResult, len(conns))
	for i, c := range conns {
		c.SetDeadline(end) // for a stream left to the netpoller
		r.ends[i] = openTCPEnd(c)
		defer r.ends[i].release()
		e := r.ends[i]
		if role == RoleSender {
			results[i] = startThread(spec.CPU, func() error { return e.write(ctx, spec.Len, end, &r.bytes[i], opt) })
		} else {
			results[i] = startThread(spec.CPU, func() error { return e.read(ctx, end, &r.bytes[i], &r.started) })
		}
	}
	side.CPU.Threads = len(conns)
	side.CPU.Pinned = spec.CPU
	done, errs := collectThreads(ctx, side, results)
	if role == RoleReceiver {
		start = r.firstByte(start, done)
	}
	// Sample streams every interval on this thread; hot threads only count.
	iv := newIntervals(start, spec.Interval, role, opt.Observer)
	tick := time.NewTimer(time.Until(iv.next))
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			iv.close(time.Now(), r.sample())
			tick.Reset(time.Until(iv.next))
		}
	}
	tick.Stop()
	now := time.Now()
	iv.finish(now, r.sample())
	side.Intervals = iv.list
	side.Duration = now.Sub(start)
	side.Bytes = r.last.bytes
	if role == RoleSender {
		side.Messages = (side.Bytes + int64(spec.Len) - 1) / int64(spec.Len)
	}
	r.streams(side)
	close(errs)
	for err := range errs {
		if side.Error == "" {
			side.Error = err.Error()
		}
	}
	m.finish(ctx, side)
	return side
}

// collectThreads adds each stream thread's CPU time to side as it ends
// and passes on its error; done closes when all have ended, and errs then
// holds their errors.
func collectThreads(ctx context.Context, side *Side, results []<-chan threadResult) (done chan struct{}, errs chan error) {
	done = make(chan struct{})
	errs = make(chan error, len(results))
	go func() {
		for i, ch := range results {
			r := <-ch
			side.CPU.UserNs += int64(r.user)
			side.CPU.SystemNs += int64(r.sys)
			// A peer that closed because the run was cancelled on its side
			// too resets the stream: that is the cancellation, not a
			// failure of the stream (meter.finish records "cancelled").
			if r.err != nil && !(ctx.Err() != nil && peerClosed(r.err)) {
				errs <- errorf("tcp stream %d: %w", i, r.err)
			}
		}
		close(done)
	}()
	return done, errs
}

// firstByte waits (bounded) for the receiver's first byte, whose time
// starts its clock; start if none came.
func (r *tcpRun) firstByte(start time.Time, done <-chan struct{}) time.Time {
	deadline := time.Now().Add(startupTimeout)
wait:
	for r.started.Load() == 0 && time.Now().Before(deadline) {
		select {
		case <-done:
			break wait
		case <-time.After(time.Millisecond):
		}
	}
	if s := r.started.Load(); s != 0 {
		return time.Unix(0, s)
	}
	return start
}

// sample is the interval since the last sample: bytes, and at the sender
// the streams' retransmits, mean RTT and total congestion window.
func (r *tcpRun) sample() Interval {
	var in Interval
	var total int64
	for i := range r.bytes {
		total += r.bytes[i].Load()
	}
	in.Bytes = total - r.last.bytes
	r.last.bytes = total
	if r.role == RoleSender {
		var retrans, rtt, cwnd int64
		for _, e := range r.ends {
			if ti, err := e.info(); err == nil {
				retrans += ti.retrans
				rtt += ti.rtt
				cwnd += ti.cwndBytes
			}
		}
		in.Retransmits = retrans - r.last.retrans
		r.last.retrans = retrans
		in.RTT = rtt / int64(len(r.ends))
		in.CwndBytes = cwnd
	}
	return in
}

// streams records each stream's final TCP_INFO in side (and the path MTU
// of the first that has one).
func (r *tcpRun) streams(side *Side) {
	for i, e := range r.ends {
		st := Stream{}
		if ti, err := e.info(); err == nil {
			st = Stream{Retransmits: ti.retrans, RTT: ti.rtt, RTTVar: ti.rttvar, MinRTT: ti.minRTT, MSS: ti.mss, PMTU: ti.pmtu, CwndBytes: ti.cwndBytes}
			if r.role == RoleReceiver && r.bytes[i].Load() > 0 {
				// The largest IP packet that arrived: the largest segment
				// payload plus IP and TCP headers and options.
				st.LargestPacket = ti.rcvMSS + 40
				if ti.timestamps {
					st.LargestPacket += 12
				}
			}
			if side.MTU == 0 {
				side.MTU = ti.pmtu
			}
		}
		st.Bytes = r.bytes[i].Load()
		side.Streams = append(side.Streams, st)
	}
}

func tcpWrite(ctx context.Context, c *net.TCPConn, size int, end time.Time, n *atomic.Int64, opt Options) error {
	buf := make([]byte, size)
	for ctx.Err() == nil && time.Now().Before(end) {
		if err := opt.wait(ctx, size); err != nil {
			break
		}
		w, err := c.Write(buf)
		n.Add(int64(w))
		if err != nil {
			if isTimeout(err) {
				break
			}
			return err
		}
	}
	// Half-close, then wait (bounded) for the receiver to read everything
	// and close its side, so the last TCP_INFO sees the whole transfer.
	c.CloseWrite()
	if ctx.Err() != nil {
		return nil
	}
	c.SetReadDeadline(time.Now().Add(drainGrace))
	var b [512]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			if errors.Is(err, io.EOF) || isTimeout(err) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

func tcpRead(c *net.TCPConn, n *atomic.Int64, started *atomic.Int64) error {
	buf := make([]byte, 256<<10)
	for {
		r, err := c.Read(buf)
		if r > 0 {
			if started.Load() == 0 {
				started.CompareAndSwap(0, time.Now().UnixNano())
			}
			n.Add(int64(r))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.CloseWrite()
				return nil
			}
			if isTimeout(err) {
				return nil
			}
			return err
		}
	}
}

// peerClosed reports whether err is the peer closing the stream under the
// writer (a reset or a broken pipe).
func peerClosed(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
