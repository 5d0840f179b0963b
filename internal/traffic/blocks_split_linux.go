package traffic

import (
	"encoding/binary"
	"net"
	"os"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/ipv4"

	"github.com/interlink/interlink/internal/idlestat"
)

// splitRec records one blocks end's parts of the round trips (split.go)
// on its hot thread; nil when the split is off.
type splitRec struct {
	wake, work, rest *hdrhistogram.Histogram
	unstamped        int64
	unheld           int64
	stamps           string // why there are no stamps at all
	idle             idlestat.Snapshot
	// pending are the requester's blocks received but not yet recorded
	// (record, after the next request is sent).
	pending []pendingBlock
	// oobs are the control buffers a sampled read gets; reads counts the
	// reads, sampled says the last one asked for stamps (see SplitEvery).
	oobs    [][]byte
	reads   int
	sampled bool
}

// pendingBlock is a completed block waiting to be recorded: its
// datagram's stamp, when it was read, its round trip and its hold.
type pendingBlock struct {
	at, now, rtt int64
	flags        uint8
	held         int64
}

// queue keeps a completed block for record.
func (s *splitRec) queue(at, now, rtt int64, h *Header) {
	s.pending = append(s.pending, pendingBlock{at: at, now: now, rtt: rtt, flags: h.Flags, held: h.Held})
}

// record records the pending blocks (none with the split off).
func (s *splitRec) record() {
	if s == nil {
		return
	}
	for i := range s.pending {
		p := &s.pending[i]
		s.block(p.at, p.now, p.rtt, &Header{Flags: p.flags, Held: p.held})
	}
	s.pending = s.pending[:0]
}

// newSplitRec asks the kernel for receive stamps on conn (before its
// socket is taken raw) and snapshots the host's idle states; nil when
// spec turns the split off. A kernel that refuses stamps leaves the
// wake-up parts absent, and says why.
func newSplitRec(spec Spec, conn *net.UDPConn) *splitRec {
	if spec.NoSplit {
		return nil
	}
	s := &splitRec{wake: newHist(), work: newHist(), rest: newHist()}
	if err := enableRxTimestamps(conn); err != nil {
		s.stamps = "the kernel refused SO_TIMESTAMPNS: " + err.Error()
	}
	s.idle = idlestat.Read("/")
	return s
}

// oob lays out room for a receive stamp for each of ms, given to them
// on sampled reads (before).
func (s *splitRec) oob(ms []ipv4.Message) {
	if s == nil {
		return
	}
	s.oobs = make([][]byte, len(ms))
	for i := range ms {
		s.oobs[i] = make([]byte, oobLen)
	}
}

// before prepares ms for the next read: with room for stamps on one read
// in SplitEvery (the first of the run included), without on the others,
// which then take the kernel's short path. Nothing with the split off.
func (s *splitRec) before(ms []ipv4.Message) {
	if s == nil {
		return
	}
	s.sampled = s.reads%SplitEvery == 0
	s.reads++
	for i := range ms {
		if s.sampled {
			ms[i].OOB = s.oobs[i]
		} else {
			ms[i].OOB = nil
		}
	}
}

// on says the split is on and the last read was sampled.
func (s *splitRec) on() bool { return s != nil && s.sampled }

// stamp is m's kernel receive stamp in ns (0: none).
func (s *splitRec) stamp(m *ipv4.Message) int64 {
	at, ok := rxStamp(m.OOB[:m.NN])
	if !ok || at <= 0 {
		s.unstamped++
		return 0
	}
	return at
}

// woke records the wake-up of a datagram stamped at (0: none) and read at
// now (ns).
func (s *splitRec) woke(at, now int64) {
	if at != 0 && now >= at {
		s.wake.RecordValue(now - at)
	}
}

// block records, at the requester, a completed block: the wake-up from
// its datagram's stamp at to now, and with the responder's hold the rest
// of its round trip rtt.
func (s *splitRec) block(at, now, rtt int64, h *Header) {
	if at == 0 || now < at {
		return
	}
	s.wake.RecordValue(now - at)
	if h.Flags&FlagHeld == 0 || h.Held < 0 {
		s.unheld++
		return
	}
	s.rest.RecordValue(max(rtt-(now-at)-h.Held, 0))
}

// held writes into a response datagram, after its header at off, how long
// the responder held the request stamped at, sent at now (ns). Only the
// traffic header changes: the session tag covers the wire header alone.
func held(pkt []byte, off int, at, now int64) {
	if at == 0 || now < at || len(pkt) < off+HeaderLen {
		return
	}
	pkt[off+5] |= FlagHeld
	binary.BigEndian.PutUint64(pkt[off+heldOffset:], uint64(now-at))
}

// side is what the end reports.
func (s *splitRec) side() *SideSplit {
	if s == nil {
		return nil
	}
	sd := &SideSplit{Wake: summarize(s.wake), Work: summarize(s.work), Rest: summarize(s.rest),
		Unstamped: s.unstamped, Unheld: s.unheld, Stamps: s.stamps,
		Idle: idlestat.Read("/").Since(s.idle), Host: bootID()}
	if sd.Stamps == "" && sd.Wake == nil && s.unstamped > 0 {
		sd.Stamps = "no datagram came with a kernel receive stamp"
	}
	return sd
}

// bootID names this host (the kernel's boot id), "" where unknown.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
