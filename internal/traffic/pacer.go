package traffic

import "time"

// pacer releases messages at a fixed rate on a virtual schedule: message k
// is due at start + k/rate. A sender that falls behind (a late wake-up, a
// blocked send) may catch up by at most depth messages at once, so an
// oversleep costs neither rate nor a burst larger than depth. Averaged over
// a test the rate is exact, which iperf3's per-interval pacing is not.
type pacer struct {
	interval float64 // ns between messages
	next     float64 // ns since start when the next message is due
	depth    float64 // ns of backlog forgiven at most
	start    time.Time
	// late is the schedule forgiven, in ns: how far the sender fell
	// behind beyond depth, in all (a thread not given a CPU, a blocked
	// send). The rate sent is short of the rate asked by that much.
	late float64
}

// newPacer paces messages of size bytes to bitsPerSec. depth is the
// backlog (in messages) a late sender may send at once.
func newPacer(start time.Time, bitsPerSec int64, size int, depth int) *pacer {
	iv := float64(size) * 8 * 1e9 / float64(bitsPerSec)
	if depth < 1 {
		depth = 1
	}
	return &pacer{interval: iv, depth: iv * float64(depth), start: start}
}

// due returns how many messages (at most max) may be sent at now, and when
// none may, how long until the next one is due.
func (p *pacer) due(now time.Time, max int) (n int, wait time.Duration) {
	t := float64(now.Sub(p.start))
	if p.next < t-p.depth {
		forgiven := t - p.depth + p.interval // forgive backlog beyond depth
		p.late += forgiven - p.next
		p.next = forgiven
	}
	for n < max && p.next <= t {
		p.next += p.interval
		n++
	}
	if n == 0 {
		wait = time.Duration(p.next - t + 1)
	}
	return n, wait
}

// newRatePacer paces perSec messages a second (0: none; a nil pacer lets
// every message go at once), with no backlog forgiven beyond one message:
// the blocks mode's paced requests (sockperf's --mps) each go alone, not
// in a burst after a late turn of the loop.
func newRatePacer(start time.Time, perSec float64) *pacer {
	if perSec <= 0 {
		return nil
	}
	iv := 1e9 / perSec
	return &pacer{interval: iv, depth: iv, start: start}
}

// take reports whether one message may go at now, counting it if so; a
// nil pacer always says yes.
func (p *pacer) take(now time.Time) bool {
	if p == nil {
		return true
	}
	n, _ := p.due(now, 1)
	return n == 1
}

// nextDue is when the next message is due (the zero time for a nil pacer:
// always).
func (p *pacer) nextDue() time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.start.Add(time.Duration(p.next))
}
