package traffic

import "math"

// seqWindow is how far back (in sequence numbers) a late datagram can still
// be told apart from a duplicate.
const seqWindow = 1 << 16

// seqTracker counts what a receiver saw of a numbered stream: unique
// datagrams, duplicates, and datagrams that arrived after a higher number
// (reordered). Gaps are losses until a late datagram fills them. It keeps a
// bitmap of the last seqWindow numbers, so duplicates are recognised rather
// than counted as received (iperf3 cannot tell them apart).
type seqTracker struct {
	next       uint64 // highest number seen + 1
	unique     uint64
	duplicates uint64
	reordered  uint64
	// unread counts numbers that arrived but could not be read as sent
	// (inside a datagram read short): neither received nor gaps.
	unread uint64
	seen   [seqWindow / 64]uint64
}

func (t *seqTracker) bit(seq uint64) (word *uint64, mask uint64) {
	i := seq % seqWindow
	return &t.seen[i/64], 1 << (i % 64)
}

// add records one datagram.
func (t *seqTracker) add(seq uint64) {
	if t.mark(seq) {
		t.unique++
	}
}

// addUnread records the k numbers from seq on as arrived but unreadable.
func (t *seqTracker) addUnread(seq, k uint64) {
	for i := uint64(0); i < k; i++ {
		if t.mark(seq + i) {
			t.unread++
		}
	}
}

// mark records that seq arrived and reports whether it is new (not a
// duplicate); the caller counts it.
func (t *seqTracker) mark(seq uint64) bool {
	switch {
	case seq >= t.next:
		// Numbers between the old and new high mark are now gaps: clear
		// their bits, which still hold numbers one window older.
		if seq-t.next >= seqWindow {
			t.seen = [seqWindow / 64]uint64{}
		} else {
			for s := t.next; s < seq; s++ {
				w, m := t.bit(s)
				*w &^= m
			}
		}
		w, m := t.bit(seq)
		*w |= m
		t.next = seq + 1
	case t.next-seq > seqWindow:
		// Older than the window: count it as a late arrival (it filled a gap
		// counted as lost); a duplicate this old cannot be recognised.
		t.reordered++
	default:
		w, m := t.bit(seq)
		if *w&m != 0 {
			t.duplicates++
			return false
		}
		*w |= m
		t.reordered++
	}
	return true
}

// lost is the number of gaps so far (numbers below the high mark never seen).
func (t *seqTracker) lost() uint64 {
	if t.unique+t.unread > t.next {
		return 0
	}
	return t.next - t.unique - t.unread
}

// jitter is the RFC 3550 section 6.4.1 interarrival jitter: a running mean
// of |D| with gain 1/16, where D is the change in transit time (arrival
// minus send stamp) between consecutive datagrams. Clock offset between the
// ends cancels out; clock drift over a test does not matter at this scale.
type jitter struct {
	primed      bool
	lastTransit int64
	j           float64 // ns
}

func (j *jitter) add(sendNs, arriveNs int64) {
	transit := arriveNs - sendNs
	if j.primed {
		d := float64(transit - j.lastTransit)
		j.j += (math.Abs(d) - j.j) / 16
	}
	j.lastTransit = transit
	j.primed = true
}

func (j *jitter) ns() int64 { return int64(j.j + 0.5) }
