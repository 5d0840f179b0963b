package cluster

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interlink/interlink/internal/shellq"
)

// DefaultStall is how long a transfer to or from a node may stand still
// before the node is cut off (Options.Stall).
const DefaultStall = 30 * time.Second

// stallNote is how long a transfer must have stood still for a run that
// ends first (--timeout, Ctrl-C) to report it with the node.
const stallNote = 3 * time.Second

// Likely causes of a stall (Stall.Likely).
const (
	// LikelyBlackhole: what was sent was never acknowledged (or nothing
	// arrived from the node) while the connection itself stayed up: large
	// segments are dropped on the way, as by a switch port or a hop whose
	// MTU is smaller than the two ends', without an ICMP error.
	LikelyBlackhole = "mtu blackhole"
	// LikelyNotReading: everything sent was acknowledged, but the node
	// takes no more (its windows stay closed): sshd or the command on the
	// node is stuck.
	LikelyNotReading = "node not reading"
)

// Stall is a transfer to or from a node that stopped moving, for which
// the node was cut off.
type Stall struct {
	Step string `json:"step"` // copy binary, write token, fetch bundle
	// Bytes is how far the transfer got. To the node: what the node's TCP
	// acknowledged (on Linux; SSH's framing included, so approximate),
	// elsewhere what SSH took. From the node: what arrived.
	Bytes int64 `json:"bytes"`
	// TotalBytes is the transfer's size; 0 when not known in advance
	// (from the node).
	TotalBytes int64         `json:"total_bytes,omitempty"`
	Idle       time.Duration `json:"idle_ns"` // how long nothing moved
	// Retransmits counts the segments this host retransmitted on the
	// connection while nothing moved (Linux; 0 elsewhere).
	Retransmits int    `json:"retransmits,omitempty"`
	Likely      string `json:"likely"` // LikelyBlackhole or LikelyNotReading
	To          string `json:"to"`     // the address the SSH connection reached
}

// stallError is a transfer that stood still: cut off by the watchdog, or
// found standing still when the run ended (stopped set).
type stallError struct {
	Stall
	stopped error
}

func (e *stallError) Error() string {
	at := fmt.Sprintf("%d bytes", e.Bytes)
	if e.TotalBytes > 0 {
		at = fmt.Sprintf("%d of %d bytes", e.Bytes, e.TotalBytes)
	}
	var msg string
	switch e.Likely {
	case LikelyNotReading:
		msg = fmt.Sprintf("transfer stopped moving at %s (everything sent was acknowledged, but the node took nothing more for %s): sshd or the command on the node is stuck (a hung file system under its TMPDIR?)",
			at, e.Idle.Round(time.Second))
	default:
		ev := fmt.Sprintf("nothing moved for %s", e.Idle.Round(time.Second))
		if e.Retransmits > 0 {
			ev += fmt.Sprintf(", %d segments retransmitted unanswered", e.Retransmits)
		}
		// The command is for a person to paste: an IPv6 address with its
		// zone (fe80::1%eth0) is quoted as replica quotes names.
		msg = fmt.Sprintf("transfer stopped moving at %s (%s): likely an MTU blackhole on the management path (large segments dropped); check the path MTU to %s (interlink pmtu --icmp %s)",
			at, ev, e.To, shellq.Quote(e.To))
	}
	if e.stopped != nil {
		return e.stopped.Error() + " while the transfer stood still: " + msg
	}
	return msg
}

// transfer is a command that moves data to or from the node: the
// binary's copy and the token (in), the check bundle (out). While it runs,
// watch cuts the node's link when it stands still.
type transfer struct {
	step string
	in   *bytes.Reader // the command's stdin; nil: the data comes from the node
	size int64         // of in
	l    *link

	sent atomic.Int64 // bytes of in taken by SSH
	got  atomic.Int64 // bytes of output arrived
	base sync.Once    // takes acked0 when SSH takes the first byte of in

	mu       sync.Mutex
	acked0   int64 // the link's acknowledged bytes when in began; -1: unknown
	moved    int64 // the progress count at the last sample
	since    time.Time
	retrans0 int         // the link's retransmits when it last moved
	ended    *stallError // see end
}

// newTransfer is a transfer of in (nil: from the node) over l.
func newTransfer(step string, in []byte, l *link) *transfer {
	x := &transfer{step: step, l: l, acked0: -1}
	if in != nil {
		x.in, x.size = bytes.NewReader(in), int64(len(in))
	}
	return x
}

// Read is the command's stdin.
func (x *transfer) Read(p []byte) (int, error) {
	x.base.Do(func() {
		if st, ok := readTCPState(x.l); ok {
			x.mu.Lock()
			x.acked0 = st.Acked
			x.mu.Unlock()
		}
	})
	n, err := x.in.Read(p)
	x.sent.Add(int64(n))
	return n, err
}

// output counts what w is given.
func (x *transfer) output(w io.Writer) io.Writer { return outCounter{w, x} }

type outCounter struct {
	w io.Writer
	x *transfer
}

func (o outCounter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.x.got.Add(int64(n))
	return n, err
}

// sample takes the transfer's progress at now and returns how long it
// has stood still. Progress is what SSH took of in, what arrived, and
// what the node's TCP acknowledged (on Linux; elsewhere what was read
// from the connection). Once all of in is taken and acknowledged, the
// transfer is over and the command runs: it is never standing still.
func (x *transfer) sample(now time.Time) (Stall, time.Duration) {
	st, ok := readTCPState(x.l)
	sent, got := x.sent.Load(), x.got.Load()
	moved := sent + got
	if ok {
		moved += st.Acked
	} else {
		moved += x.l.read.Load()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	delivered := ok && x.in != nil && sent == x.size && st.Queued == 0
	if x.since.IsZero() || moved != x.moved || delivered {
		x.moved, x.since, x.retrans0 = moved, now, st.Retransmits
	}
	s := Stall{Step: x.step, Bytes: got, Idle: now.Sub(x.since), Likely: LikelyBlackhole, To: x.to()}
	if x.in != nil {
		s.Bytes, s.TotalBytes = sent, x.size
		if ok && x.acked0 >= 0 {
			s.Bytes = min(sent, max(0, st.Acked-x.acked0))
		}
		if ok && st.Unacked == 0 {
			s.Likely = LikelyNotReading
		}
	}
	if ok {
		s.Retransmits = st.Retransmits - x.retrans0
	}
	return s, s.Idle
}

func (x *transfer) to() string {
	if a, err := remoteIP(x.l); err == nil {
		return a.String()
	}
	return x.l.RemoteAddr().String()
}

// watch cuts the link when the transfer stands still for stall, until
// the returned function is called.
func (x *transfer) watch(stall time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(max(min(time.Second, stall/4), 10*time.Millisecond))
		defer t.Stop()
		x.sample(time.Now())
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if s, idle := x.sample(now); idle >= stall {
					x.l.cut(&stallError{Stall: s})
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// end records how the transfer stood when the run ended first with
// cause (call it before the link is cut): a *stallError naming cause when
// it had stood still for note (the node's stillNote, or its stall timeout
// when shorter).
func (x *transfer) end(cause error, note time.Duration) {
	s, idle := x.sample(time.Now())
	if idle < note {
		return
	}
	x.mu.Lock()
	x.ended = &stallError{Stall: s, stopped: cause}
	x.mu.Unlock()
}

// endedStill is what end recorded; nil when the transfer was moving.
func (x *transfer) endedStill() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended == nil {
		return nil
	}
	return x.ended
}
