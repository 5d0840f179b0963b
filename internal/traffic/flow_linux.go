package traffic

import (
	"errors"
	"net"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// feedbackIn reads a flow-controlled sender's feedback (flow.go) from its
// socket and hands it to the sender's flowSender.
type feedbackIn struct {
	pc        batchConn
	ms        []ipv4.Message
	off       int
	opt       Options
	foreign   int64 // datagrams that were not feedback of this run
	truncated int64 // datagrams read short (larger than any feedback)
}

func newFeedbackIn(pc batchConn, off int, opt Options) *feedbackIn {
	ms := make([]ipv4.Message, 16)
	for i := range ms {
		// Room for a larger datagram than feedback: it is read whole and
		// counted as foreign rather than taken for truncated feedback.
		ms[i].Buffers = [][]byte{make([]byte, off+HeaderLen+64)}
	}
	return &feedbackIn{pc: pc, ms: ms, off: off, opt: opt}
}

// poll takes the feedback that has arrived, without waiting.
func (r *feedbackIn) poll(f *flowSender) error {
	for {
		n, err := r.pc.ReadNow(r.ms)
		if err != nil {
			if isTimeout(err) {
				return nil
			}
			return err
		}
		r.take(f, n, time.Now())
		if n < len(r.ms) {
			return nil
		}
	}
}

// wait blocks until feedback arrives or d passes, then takes what came.
func (r *feedbackIn) wait(f *flowSender, d time.Duration) error {
	r.pc.SetReadDeadline(time.Now().Add(d))
	n, err := r.pc.ReadBatch(r.ms, unix.MSG_WAITFORONE)
	r.pc.SetReadDeadline(time.Time{})
	if err != nil && !isTimeout(err) {
		return err
	}
	r.take(f, n, time.Now())
	return nil
}

func (r *feedbackIn) take(f *flowSender, n int, now time.Time) {
	var h Header
	for i := 0; i < n; i++ {
		pkt, _, short := datagram(&r.ms[i])
		if short {
			r.truncated++
			continue
		}
		if len(pkt) != r.off+HeaderLen || h.Parse(pkt[r.off:]) != nil || h.Kind != KindFeedback || r.opt.open(pkt) != nil {
			if !r.opt.hello(pkt) {
				r.foreign++
			}
			continue
		}
		f.feedback(h.Seq, int(h.Size), now)
	}
}

// feedbackOut is a flow-controlled receiver's feedback: when it is due
// (flowReceiver) and the datagram that carries it.
type feedbackOut struct {
	flowReceiver
	msg []ipv4.Message
	off int
}

func newFeedbackOut(window, off int, now time.Time) *feedbackOut {
	return &feedbackOut{flowReceiver: flowReceiver{window: window, last: now},
		msg: []ipv4.Message{{Buffers: [][]byte{make([]byte, off+HeaderLen)}}}, off: off}
}

// send reports high (the next sequence number the receiver expects) and
// the window. It never waits: a full send buffer loses the feedback, as the
// network may, and the sender probes. A refused send (the sender gone) is
// not an error of the receiver's.
func (f *feedbackOut) send(pc batchConn, opt Options, high uint64, now time.Time) {
	b := f.msg[0].Buffers[0]
	(&Header{Kind: KindFeedback, Seq: high, Size: uint32(f.window), Stamp: now.UnixNano()}).Put(b[f.off:])
	f.last, f.unsent = now, 0
	if opt.seal(b) != nil {
		return
	}
	if n, _ := pc.WriteBatch(f.msg, unix.MSG_DONTWAIT); n == 1 {
		f.sent++
	}
}

// peerGone reports the error a connected UDP socket returns after its
// peer's port answered with ICMP port unreachable: a flow-controlled
// receiver's feedback can find its sender gone (cancelled, or past its end
// markers), which is the end of the sender's run, not the receiver's error.
func peerGone(err error) bool { return errors.Is(err, unix.ECONNREFUSED) }

// receiveBuffer is the size of a socket's receive buffer as the kernel
// has it (SO_RCVBUF: twice what was asked, at most rmem_max unless forced);
// 0 when unknown.
func receiveBuffer(c *net.UDPConn) int {
	n := 0
	control(c, func(fd int) error {
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err == nil {
			n = v
		}
		return err
	})
	return n
}
