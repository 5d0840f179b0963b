package pmtu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// One round of the search: its sizes probed in parallel, each re-sent up
// to Tries times, with the waits adapted to the measured round trip.

func (s *search) timeout() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout
	}
	if s.maxRTT == 0 {
		return max(s.opt.MinTimeout, 250*time.Millisecond)
	}
	return min(max(4*s.maxRTT+20*time.Millisecond, s.opt.MinTimeout), s.opt.MaxTimeout)
}

// gap is the wait before re-sending unanswered probes.
func (s *search) gap() time.Duration {
	if s.patient {
		return s.opt.MaxTimeout / 10
	}
	if s.maxRTT == 0 {
		return min(20*time.Millisecond, s.timeout())
	}
	return min(max(2*s.maxRTT, 10*time.Millisecond), s.timeout())
}

// roundState is what a round knows of its probes.
type roundState struct {
	res     map[int]*outcome
	ids     map[uint64]int       // probe ID: its size
	sentAt  map[uint64]time.Time // probe ID: when sent, until answered
	pending map[int]bool         // sizes neither passed nor definitely failed
}

// round probes sizes in parallel, each up to Tries times, until each has
// passed or definitely failed.
func (s *search) round(ctx context.Context, sizes []int) (map[int]*outcome, error) {
	st := &roundState{res: map[int]*outcome{}, ids: map[uint64]int{}, sentAt: map[uint64]time.Time{}, pending: map[int]bool{}}
	for _, size := range sizes {
		st.res[size] = &outcome{}
		st.pending[size] = true
	}
	events := s.p.Events()
	drain(events)
	for attempt := 0; attempt < s.opt.Tries && len(st.pending) > 0; attempt++ {
		if err := s.send(ctx, st); err != nil {
			return st.res, err
		}
		// Retries go out quickly (a lost probe is re-sent after a few
		// round trips, not after a full timeout), and the round ends one
		// timeout after the last attempt: a blackhole costs one timeout per
		// round, not Tries of them.
		wait := s.timeout()
		if attempt < s.opt.Tries-1 {
			wait = s.gap()
		}
		if err := s.await(ctx, st, events, wait); err != nil {
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
		st.ids[id] = size
		st.sentAt[id] = at
	}
	return nil
}

// await takes events for wait, or until no size is pending.
func (s *search) await(ctx context.Context, st *roundState, events <-chan Event, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(st.pending) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		case ev := <-events:
			s.take(st, ev)
		}
	}
	return nil
}

// take applies one event to the round.
func (s *search) take(st *roundState, ev Event) {
	switch ev.Kind {
	case EvAck:
		size, ok := st.ids[ev.ID]
		if !ok {
			return // a late ack from an earlier round
		}
		if at, ok := st.sentAt[ev.ID]; ok { // once per probe, even if acked twice
			rtt := time.Since(at)
			s.maxRTT = max(s.maxRTT, rtt)
			s.rtts = append(s.rtts, rtt)
			delete(st.sentAt, ev.ID)
		}
		st.res[size].acked++
		st.res[size].passed = true
		delete(st.pending, size)
	case EvTooBig:
		if ev.MTU > 0 && (s.icmpMTU == 0 || ev.MTU < s.icmpMTU) {
			s.icmpMTU, s.icmpBy = ev.MTU, ev.From
		}
		// Everything in flight above the reported MTU failed,
		// definitely: no retry needed.
		for size := range st.pending {
			if size > ev.MTU || st.ids[ev.ID] == size {
				st.res[size].tooBig = true
				delete(st.pending, size)
			}
		}
	case EvUnreach:
		s.unreach = fmt.Sprintf("%s reported %s", ev.From, ev.Info)
	}
}

func drain(ch <-chan Event) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
