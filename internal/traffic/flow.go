package traffic

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Flow control of unpaced UDP (Spec.Flow). An unpaced sender outruns a
// receiver that needs more CPU per datagram than it does (with UDP
// segmentation offload it usually does), and the excess is dropped at the
// receiver's socket buffer: the loss then measures the sender's speed, not
// the path. So the receiver says what it has read: a small feedback
// datagram (KindFeedback: its high mark, the next sequence number it
// expects, and the window it grants) whenever it has read a quarter window
// since the last one, caught up with its queue, or feedbackEvery passed;
// only after it read data since the last feedback, so it never sends more
// bytes than it received (the agent's promise). The sender keeps at most a
// window of datagrams beyond that high mark, sized so that they fit the
// receiver's socket buffer: it cannot overrun it. Datagrams lost on the way
// fall below the high mark and stop counting, so loss in the network does
// not close the window.
//
// Feedback is a datagram like any other and can be lost. A sender that
// waits on a full window for probeAfter without feedback sends one probe
// datagram past the window (the receiver answers what it reads), at most
// probeBudget of them between two feedbacks; after flowGiveUp without any
// feedback it stops waiting and sends unpaced for the rest of the run (a
// receiver that does not take part, such as an older agent, costs that
// once), and the result says so.
const (
	feedbackEvery = 500 * time.Microsecond
	probeAfter    = 2 * time.Millisecond
	flowGiveUp    = 200 * time.Millisecond
	// receiverBoundShare is the share of a run the sender may wait on the
	// window before the receiver counts as the bottleneck: a sender that
	// outruns its receiver waits most of the time, one that does not only
	// when the receiver is briefly off its CPU.
	receiverBoundShare = 0.10
)

// datagramTruesize is what one datagram of size bytes is likely charged
// against the receiver's socket buffer at an MTU: the kernel counts each
// packet's buffer (its skb truesize), not the payload. Measured on veth:
// 832 to 920 bytes for an 88-byte datagram, 2304 for 1400 bytes, 9024 for
// 8 KiB sent with segmentation offload and 16640 without, 13824 for 8 KiB
// in six fragments at MTU 1500 (2304 each). A packet's buffer is its size
// rounded up to a power of two (at least 1 KiB) plus 256 bytes of
// bookkeeping here, the largest of those.
func datagramTruesize(size, mtu int) int {
	pkt := size + udpHeader + ipHeader
	k := 1
	if mtu > 0 {
		if k = PacketsPerDatagram(size, mtu); k > 1 {
			pkt = mtu
		}
	}
	return max(k, 1) * (max(1024, 1<<bits.Len(uint(pkt-1))) + 256)
}

// flowWindow is how many datagrams of size bytes may be in flight toward a
// receiver whose socket buffer holds rcvbuf bytes (the kernel's figure,
// SO_RCVBUF as getsockopt reads it): half the buffer at the estimated
// charge per datagram. Not all of it: Linux releases what a UDP reader
// consumed in chunks of up to a quarter of the buffer (udp_rmem_release's
// forward_deficit), so only three quarters are sure to be free of what was
// read; the rest is room for probes and a wrong estimate. At least 1.
func flowWindow(rcvbuf, size, mtu int) int {
	return max(1, rcvbuf/2/datagramTruesize(size, mtu))
}

// defaultReceiveBuffer is Linux's default socket receive buffer
// (net.core.rmem_default), what a receiver has until it sizes its own.
const defaultReceiveBuffer = 212992

// FlowStats is a flow-controlled sender's account of its window
// (UDPStats.Flow of the sender).
type FlowStats struct {
	// Window is the last window the receiver granted, in datagrams beyond
	// what it had read; MaxInFlight the most datagrams the sender had sent
	// beyond the receiver's reported high mark (at most Window plus the
	// probes since a feedback).
	Window      int   `json:"window"`
	MaxInFlight int64 `json:"max_in_flight"`
	// Feedback counts the receiver's feedback datagrams received; Probes
	// the datagrams sent past the window after probeAfter without one.
	Feedback int64 `json:"feedback"`
	Probes   int64 `json:"probes"`
	// WaitNs is how long the sender waited on a full window.
	WaitNs int64 `json:"wait_ns"`
	// Abandoned says why flow control stopped during the run (the
	// receiver sent no feedback for flowGiveUp); empty when it held.
	Abandoned string `json:"abandoned,omitempty"`
}

// flowSender is the sender's half of flow control. The zero value is not
// ready: use newFlowSender.
type flowSender struct {
	high     uint64    // the receiver's high mark from the newest feedback
	heard    time.Time // the last feedback (the start before any)
	probedAt time.Time
	probes   int // probes since the last feedback
	budget   int
	off      bool
	st       FlowStats
}

// newFlowSender starts with window datagrams allowed before any feedback.
func newFlowSender(start time.Time, window int) *flowSender {
	f := &flowSender{heard: start, st: FlowStats{Window: max(window, 1)}}
	f.budget = max(1, f.st.Window/8)
	return f
}

// credit is how many datagrams may be sent now when seq is the next
// sequence number.
func (f *flowSender) credit(seq uint64) int {
	if f.off {
		return math.MaxInt
	}
	limit := f.high + uint64(f.st.Window) + uint64(f.probes)
	if seq >= limit {
		return 0
	}
	return int(min(limit-seq, math.MaxInt32))
}

// sent records that datagrams up to next-1 are on their way.
func (f *flowSender) sent(next uint64) {
	if !f.off && next > f.high {
		f.st.MaxInFlight = max(f.st.MaxInFlight, int64(next-f.high))
	}
}

// feedback takes a receiver's report: its high mark and the window it
// grants. A report older than one already taken (reordered) only counts.
func (f *flowSender) feedback(high uint64, window int, now time.Time) {
	f.st.Feedback++
	if high < f.high {
		return
	}
	f.high = high
	if window > 0 {
		f.st.Window = window
		f.budget = max(1, window/8)
	}
	f.heard = now
	f.probes = 0
}

// stalled is called when credit is 0. It returns how long to wait for
// feedback before calling again; 0 means the sender may send now (a probe
// was granted, or flow control was given up).
func (f *flowSender) stalled(now time.Time) time.Duration {
	silent := now.Sub(f.heard)
	if silent >= flowGiveUp {
		f.off = true
		f.st.Abandoned = fmt.Sprintf("the receiver's feedback stopped for %v: the rest of the run was sent unpaced", flowGiveUp)
		if f.st.Feedback == 0 {
			f.st.Abandoned = fmt.Sprintf("no feedback from the receiver within %v of the start (a receiver without flow control, such as an older agent?): the run was sent unpaced from then on", flowGiveUp)
		}
		return 0
	}
	left := flowGiveUp - silent
	if f.probes >= f.budget {
		return left
	}
	since := now.Sub(f.heard)
	if f.probedAt.After(f.heard) {
		since = now.Sub(f.probedAt)
	}
	if since < probeAfter {
		return min(probeAfter-since, left)
	}
	f.probes++
	f.st.Probes++
	f.probedAt = now
	return 0
}

// flowReceiver is the receiver's half: when to send feedback.
type flowReceiver struct {
	window int       // granted, in datagrams
	last   time.Time // the last feedback sent
	unsent int       // datagrams read since then
	sent   int64
}

// due reports whether feedback should go now: something was read since the
// last one, and a quarter window was read, or the receiver drained its
// queue (a sender waiting on the window waits for this), or feedbackEvery
// passed.
func (f *flowReceiver) due(now time.Time, drained bool) bool {
	return f.unsent > 0 && (f.unsent >= max(1, f.window/4) || drained || now.Sub(f.last) >= feedbackEvery)
}

// FlowSummary is a flow-controlled run's account (Summary.Flow): the
// window, what the feedback cost, and which end was the bottleneck.
type FlowSummary struct {
	// Window is the receiver's last grant in datagrams, from its socket
	// buffer of ReceiveBufferBytes.
	Window             int   `json:"window"`
	ReceiveBufferBytes int   `json:"receive_buffer_bytes,omitempty"`
	MaxInFlight        int64 `json:"max_in_flight"`
	Feedback           int64 `json:"feedback"`
	Probes             int64 `json:"probes"`
	// WaitPercent is the share of the sender's run spent waiting on a full
	// window. Bottleneck is "receiver" when it is at least
	// receiverBoundShare (the sender could have sent more than the
	// receiver read), else "sender"; empty when flow control was
	// abandoned.
	WaitPercent float64 `json:"window_wait_percent"`
	Bottleneck  string  `json:"bottleneck,omitempty"`
	Abandoned   string  `json:"abandoned,omitempty"`
}

// The ends a flow-controlled run can be bound by.
const (
	BottleneckSender   = "sender"
	BottleneckReceiver = "receiver"
)

// summarizeFlow is the flow summary of a UDP flow from its two ends; nil
// when the sender was not flow-controlled.
func summarizeFlow(send, recv *Side) *FlowSummary {
	if send.UDP == nil || send.UDP.Flow == nil {
		return nil
	}
	st := send.UDP.Flow
	fs := &FlowSummary{Window: st.Window, MaxInFlight: st.MaxInFlight, Feedback: st.Feedback, Probes: st.Probes, Abandoned: st.Abandoned}
	if recv.UDP != nil {
		fs.ReceiveBufferBytes = recv.UDP.ReceiveBufferBytes
	}
	if send.Duration > 0 {
		fs.WaitPercent = 100 * min(float64(st.WaitNs)/float64(send.Duration), 1)
	}
	if st.Abandoned == "" {
		fs.Bottleneck = BottleneckSender
		if fs.WaitPercent >= 100*receiverBoundShare {
			fs.Bottleneck = BottleneckReceiver
		}
	}
	return fs
}
