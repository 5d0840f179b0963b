package traffic

import "time"

// Observer receives each interval as soon as an end closes it (for live
// per-interval lines). It is called from the end's hot thread: it must be
// quick and must not keep the Interval's pointers.
type Observer func(Role, Interval)

// intervals cuts an end's run into Spec.Interval slices.
type intervals struct {
	start time.Time
	every time.Duration
	from  time.Time // start of the open interval
	next  time.Time // when it closes
	list  []Interval
	role  Role
	obs   Observer
}

func newIntervals(start time.Time, every time.Duration, role Role, obs Observer) *intervals {
	return &intervals{start: start, every: every, from: start, next: start.Add(every), role: role, obs: obs}
}

func (iv *intervals) due(now time.Time) bool { return !now.Before(iv.next) }

// close ends the open interval at now with the figures in in (Bytes and
// Messages for the interval; the rest as the engine filled them).
func (iv *intervals) close(now time.Time, in Interval) {
	in.Start = iv.from.Sub(iv.start)
	in.End = now.Sub(iv.start)
	if d := (in.End - in.Start).Seconds(); d > 0 {
		in.BitsPerSec = float64(in.Bytes) * 8 / d
	}
	iv.list = append(iv.list, in)
	if iv.obs != nil {
		iv.obs(iv.role, in)
	}
	iv.from = now
	for !iv.next.After(now) {
		iv.next = iv.next.Add(iv.every)
	}
}

// finish closes a last partial interval if it holds anything and is at
// least a tenth of an interval long (iperf3 drops shorter tails too), or
// is the whole run: a run shorter than that (--time 100ms, or a Ctrl-C)
// still has its one interval at each end.
func (iv *intervals) finish(now time.Time, in Interval) {
	long := now.Sub(iv.from) >= iv.every/10 || len(iv.list) == 0
	if long && (in.Bytes > 0 || in.Messages > 0 || in.Lost != 0 || in.LostBlocks > 0) {
		iv.close(now, in)
	}
}
