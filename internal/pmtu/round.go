package pmtu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// One round of the search: its sizes probed in parallel, with the waits
// adapted to the measured round trip.

func (s *search) timeout() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout
	}
	t := max(s.opt.MinTimeout, 250*time.Millisecond)
	if s.maxRTT > 0 {
		t = max(4*s.maxRTT+20*time.Millisecond, s.opt.MinTimeout)
	}
	// After a re-check that proved nothing (the peer stalled), each wait
	// is four times longer, up to MaxTimeout.
	for range s.voids {
		t *= 4
	}
	return min(t, s.opt.MaxTimeout)
}

// gap is the wait before re-sending unanswered probes.
func (s *search) gap() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout / 10
	}
	if s.voids > 0 {
		// After a stall: spread the re-check's probes over its wait.
		return s.timeout() / 4
	}
	if s.maxRTT == 0 {
		return min(20*time.Millisecond, s.timeout())
	}
	return min(max(2*s.maxRTT, 10*time.Millisecond), s.timeout())
}

// window is how long a quick round lasts from its start: a few of the
// slowest round trips seen (acks of the sizes that pass come back
// together), at least 10 ms, at most a timeout; a timeout while no round
// trip is known.
func (s *search) window() time.Duration {
	if s.maxRTT == 0 {
		return s.timeout()
	}
	return min(max(3*s.maxRTT, 10*time.Millisecond), s.timeout())
}

// roundState is what a round knows of its probes.
type roundState struct {
	res     map[int]*outcome
	pending map[int]bool // sizes neither passed nor definitely failed
	last    time.Time    // the round's last send or event
}

// round probes pl's sizes in parallel until each has passed or definitely
// failed: a quick round sends each once and ends window after its start, a
// full one sends each up to Tries times and ends a timeout after its last
// send.
func (s *search) round(ctx context.Context, pl plan) (map[int]*outcome, error) {
	st := &roundState{res: map[int]*outcome{}, pending: map[int]bool{}}
	for _, size := range pl.sizes {
		st.res[size] = &outcome{}
		st.pending[size] = true
	}
	events := s.p.Events()
	s.takeQueued(st, events)
	tries := 1
	if pl.full {
		tries = max(pl.tries, 1)
	}
	start := time.Now()
	for attempt := 0; attempt < tries && len(st.pending) > 0; attempt++ {
		if err := s.send(ctx, st); err != nil {
			return st.res, err
		}
		// Retries go out quickly (a lost probe is re-sent after a few
		// round trips, not after a full timeout), and the round ends one
		// timeout after the last attempt.
		sent := time.Now()
		until := func() time.Time { return sent.Add(s.timeout()) }
		switch {
		case !pl.full:
			until = func() time.Time { return start.Add(s.window()) }
		case attempt < tries-1:
			until = func() time.Time { return sent.Add(s.gap()) }
		}
		if err := s.await(ctx, st, events, until); err != nil {
			return st.res, err
		}
	}
	for _, o := range st.res {
		if o.passed && o.sent > o.acked {
			s.lost += o.sent - o.acked
		}
	}
	return st.res, nil
}

// send sends one probe of each pending size; a size the local interface
// refuses is settled at once.
func (s *search) send(ctx context.Context, st *roundState) error {
	for _, size := range slices.Sorted(maps.Keys(st.pending)) {
		// Timed from before the send: taken after it, a sender descheduled
		// between the two (a loaded machine) times its answer from too late.
		at := time.Now()
		id, err := s.p.Send(ctx, size)
		if errors.Is(err, ErrLocalTooBig) {
			st.res[size].local = true
			delete(st.pending, size)
			continue
		}
		if err != nil {
			return err
		}
		s.probes++
		st.res[size].sent++
		s.sizeOf[id] = size
		s.sentAt[id] = at
	}
	st.last = time.Now()
	return nil
}

// takeQueued takes the events that arrived between rounds (late acks).
func (s *search) takeQueued(st *roundState, events <-chan Event) {
	for {
		select {
		case ev := <-events:
			s.take(st, ev)
		default:
			return
		}
	}
}

// await takes events until the time until returns (asked again after each
// event: a new round trip can move it), or until no size is pending. A
// wait that ends with sizes unanswered counts as waited from the round's
// last send or event.
func (s *search) await(ctx context.Context, st *roundState, events <-chan Event, until func() time.Time) error {
	timer := time.NewTimer(time.Until(until()))
	defer timer.Stop()
	for len(st.pending) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			if d := time.Until(until()); d > 0 {
				timer.Reset(d)
				continue
			}
			s.waited += time.Since(st.last)
			return nil
		case ev := <-events:
			s.take(st, ev)
			st.last = time.Now()
			// The first round trip of a search shortens its window.
			if !timer.Stop() {
				<-timer.C
			}
			timer.Reset(time.Until(until()))
		}
	}
	return nil
}

// take applies one event to the round. An ack of a probe sent in an earlier
// round still says its size passed.
func (s *search) take(st *roundState, ev Event) {
	switch ev.Kind {
	case EvAck:
		size, ok := s.sizeOf[ev.ID]
		if !ok {
			return // not one of ours
		}
		if at, ok := s.sentAt[ev.ID]; ok { // once per probe, even if acked twice
			rtt := time.Since(at)
			s.maxRTT = max(s.maxRTT, rtt)
			s.rtts = append(s.rtts, rtt)
			delete(s.sentAt, ev.ID)
		}
		o := st.res[size]
		if o == nil {
			o = &outcome{late: true}
			st.res[size] = o
		}
		o.acked++
		o.passed = true
		delete(st.pending, size)
	case EvTooBig:
		if ev.MTU > 0 && (s.icmpMTU == 0 || ev.MTU < s.icmpMTU) {
			s.icmpMTU, s.icmpBy = ev.MTU, ev.From
		}
		// Everything in flight above the reported MTU failed,
		// definitely: no retry needed.
		for size := range st.pending {
			if size > ev.MTU || s.sizeOf[ev.ID] == size {
				st.res[size].tooBig = true
				delete(st.pending, size)
			}
		}
	case EvUnreach:
		s.unreach = fmt.Sprintf("%s reported %s", ev.From, ev.Info)
	}
}
