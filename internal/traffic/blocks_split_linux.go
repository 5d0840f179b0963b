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
	// awake is the end's receive path with its reader awake, ns
	// (awake_linux.go), taken out of each wake-up; 0 with awakeErr
	// saying why it was not measured.
	awake    int64
	awakeErr string
	idle     idlestat.Snapshot
	// pending are the requester's blocks received but not yet recorded
	// (record, after the next request is sent).
	pending []pendingBlock
	// oobs are the control buffers a sampled read gets; reads counts the
	// reads, sampled says the last one asked for stamps (see SplitEvery);
	// follow (responder) that the last batch held a request with
	// FlagSampling.
	oobs    [][]byte
	reads   int
	sampled bool
	follow  bool
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

// setAwake gives the end its receive path awake (see awakeFor); nothing
// with the split off or without stamps.
func (s *splitRec) setAwake(aw awake) {
	if s == nil || s.stamps != "" {
		return
	}
	s.awake, s.awakeErr = aw.ns, aw.err
}

// wakeOf is the wake-up of a datagram stamped at and read at now: the
// time beyond the receive path awake.
func (s *splitRec) wakeOf(at, now int64) int64 { return max(now-at-s.awake, 0) }

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

// before prepares ms for the next read: with room for stamps when the
// read is sampled (see SplitEvery), without otherwise, which then takes
// the kernel's short path. Nothing with the split off.
func (s *splitRec) before(ms []ipv4.Message, sampled bool) {
	if s == nil {
		return
	}
	s.sampled = sampled
	s.reads++
	for i := range ms {
		if s.sampled {
			ms[i].OOB = s.oobs[i]
		} else {
			ms[i].OOB = nil
		}
	}
}

// window says whether the requests the requester issues after issued
// ones are marked FlagSampling: the first SplitRun of every
// SplitRun*SplitEvery, or all when they are paced to splitAllBelow a
// second or fewer. False with the split off.
func (s *splitRec) window(spec *Spec, issued int64) bool {
	if s == nil {
		return false
	}
	if spec.RequestsPerSec > 0 && spec.RequestsPerSec <= splitAllBelow {
		return true
	}
	return issued%(SplitRun*SplitEvery) < SplitRun
}

// splitAllBelow is the request rate (a second) at or below which every
// read is sampled: a read a millisecond or more apart, what it costs
// does not count.
const splitAllBelow = 1000

// follows says whether the responder reads with stamps next: when the
// last batch of requests held one marked FlagSampling (Spec.SplitSync),
// or, from a requester that does not mark them, one read in SplitEvery.
func (s *splitRec) follows(spec *Spec) bool {
	if s == nil {
		return false
	}
	if spec.SplitSync {
		return s.follow || s.reads == 0
	}
	return s.reads%SplitEvery == 0
}

// followNext records whether the batch just read held a request sent
// while its requester read with stamps (FlagSampling).
func (s *splitRec) followNext(sampling bool) {
	if s != nil {
		s.follow = sampling
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
		s.wake.RecordValue(s.wakeOf(at, now))
	}
}

// block records, at the requester, a completed block: the wake-up from
// its datagram's stamp at to now (beyond the receive path awake), and with
// the responder's hold the rest of its round trip rtt, which so holds both
// ends' receive paths.
func (s *splitRec) block(at, now, rtt int64, h *Header) {
	if at == 0 || now < at {
		return
	}
	wake := s.wakeOf(at, now)
	s.wake.RecordValue(wake)
	if h.Flags&FlagHeld == 0 || h.Held < 0 {
		s.unheld++
		return
	}
	s.rest.RecordValue(max(rtt-wake-h.Held, 0))
}

// held writes into a response datagram, after its header at off, how long
// the responder held the request stamped at, sent at now (ns), less its
// receive path awake (its wake-up and its work). Only the traffic header
// changes: the session tag covers the wire header alone.
func (s *splitRec) held(pkt []byte, off int, at, now int64) {
	if at == 0 || now < at || len(pkt) < off+HeaderLen {
		return
	}
	pkt[off+5] |= FlagHeld
	binary.BigEndian.PutUint64(pkt[off+heldOffset:], uint64(max(now-at-s.awake, 0)))
}

// side is what the end reports.
func (s *splitRec) side() *SideSplit {
	if s == nil {
		return nil
	}
	sd := &SideSplit{Wake: summarize(s.wake), Work: summarize(s.work), Rest: summarize(s.rest),
		Unstamped: s.unstamped, Unheld: s.unheld, Stamps: s.stamps, ReceivePathErr: s.awakeErr,
		Idle: idlestat.Read("/").Since(s.idle), Host: bootID()}
	if s.awake > 0 {
		sd.ReceivePath = &s.awake
	}
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
