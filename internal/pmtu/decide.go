package pmtu

import (
	"context"
	"maps"
	"math"
	"slices"
)

// The search's decisions: what each round probes, and what its outcomes
// say. Pure: the probing itself is round.go's (or a test's model of a path).

// plan is one round: its sizes, and whether it is a full round (each size
// sent up to Tries times, the last wait a whole timeout) or a quick one
// (each size sent once, the round over a few round trips after its start:
// what is unanswered by then is only suspected, and any boundary resting
// on such a silence is re-checked by a full round before it is believed).
type plan struct {
	sizes []int
	full  bool
	tries int // of a full round
	// control, when set, is a size known to pass, sent with the boundary
	// it re-checks: the boundary's silence counts only if the control
	// was answered in the same round. A peer that stalls (an agent
	// descheduled on a loaded machine) answers neither, and then the
	// round proves nothing.
	control int
}

// falseLimit is the chance, at most, that the re-check of a boundary
// calls a size that passes a limit, given the loss seen; maxTries bounds
// the probes it sends for that (the agent's cap on Options.Tries).
const (
	falseLimit = 1e-6
	maxTries   = 10
)

// verifyTries is how many probes the re-check of a boundary sends: enough
// that round trips lost at the rate seen so far all fail with a chance
// under falseLimit; at least Options.Tries, at most maxTries. The rate
// starts from a prior of 1 round trip in 50 lost (1 % each way), which
// the search's own probes outweigh as they are answered or lost: 4 probes
// at that rate, 10 at 25 % or more.
func (s *search) verifyTries() int {
	p := float64(s.lost+1) / float64(s.lost+len(s.rtts)+50)
	n := int(math.Ceil(math.Log(falseLimit) / math.Log(p)))
	return min(max(n, s.opt.Tries), max(maxTries, s.opt.Tries))
}

// patientRounds is how many patient rounds (each waiting MaxTimeout) a
// search that got no answer at all tries before calling the path
// unreachable.
const patientRounds = 2

// maxVoids is how many re-checks of a boundary may prove nothing (the
// control unanswered) before the last one is believed anyway.
const maxVoids = 2

// run probes round by round until the boundary is settled or nothing more
// can be learned.
func (s *search) run(ctx context.Context) error {
	return s.loop(ctx, s.round)
}

// maxRounds bounds a search: a byte-exact search of 64 KiB takes about ten
// quick rounds, and each burst of loss that misleads one costs a few more.
const maxRounds = 40

// loop is the search's decisions: it plans each round, has do probe it,
// and learns from the outcomes. Tests drive it with a model of a path.
func (s *search) loop(ctx context.Context, do func(context.Context, plan) (map[int]*outcome, error)) error {
	for round := 0; round < maxRounds; round++ {
		pl := s.next(round)
		if len(pl.sizes) == 0 {
			return nil
		}
		res, err := do(ctx, pl)
		if err != nil {
			return err
		}
		if o := res[pl.control]; pl.control > 0 {
			unproven := o == nil || !o.passed
			if unproven && s.voids < maxVoids {
				// Neither the boundary nor the size known to pass
				// came back: the peer stalled. Re-check again, more
				// patiently.
				s.voids++
				s.verified = false
				continue
			}
			// Believed anyway when still unproven: the result says
			// so (Result.PeerSilent).
			s.voids, s.peerSilent = 0, unproven
		}
		delete(res, pl.control) // answered, or believed anyway: says nothing new
		s.learn(res)
		if !s.afterRound(ctx, round) {
			return nil
		}
	}
	return nil
}

// next plans the next round; no sizes when the search is done. Only two
// kinds of round wait out a whole timeout: the one that re-checks a
// boundary resting on silence (a blackhole pays that once, not once per
// size), and the patient one after an unanswered start.
func (s *search) next(round int) plan {
	switch {
	case s.hi-s.lo <= 1 && (s.verified || s.hi > s.limit || s.silent[s.hi] == 0 || s.lo == 0):
		// Done: the boundary is a definite failure (ICMP, local), was
		// re-checked, or nothing failed at all.
		return plan{}
	case s.hi-s.lo <= 1:
		// The boundary rests on silence: check it Tries times, with a
		// whole timeout, before calling it a limit, so that loss cannot
		// fake one; and with the largest size that passed, so that a
		// stalled peer cannot either.
		s.verified = true
		return plan{sizes: []int{s.lo, s.hi}, full: true, tries: s.verifyTries(), control: s.lo}
	case round == 0:
		return plan{sizes: s.first}
	case s.patient:
		return plan{sizes: []int{s.minSize}, full: true, tries: s.opt.Tries}
	case s.again:
		// The patient round was answered: the first round's sizes
		// were lost to a late peer, not to the path. Ask them again.
		s.again = false
		return plan{sizes: s.first[1:]}
	case s.icmpMTU > s.lo && s.icmpMTU < s.hi:
		// A hop told us its MTU: verify it and the byte above.
		sizes := []int{s.icmpMTU}
		if s.icmpMTU+1 < s.hi {
			sizes = append(sizes, s.icmpMTU+1)
		}
		return plan{sizes: sizes}
	}
	return plan{sizes: spread(s.lo, s.hi, s.opt.Parallel)}
}

// learn narrows the interval by a round's outcomes.
func (s *search) learn(res map[int]*outcome) {
	for _, size := range slices.Sorted(maps.Keys(res)) {
		if res[size].passed && size > s.lo {
			s.lo = size
		}
	}
	if s.lo >= s.hi {
		// The boundary passed on re-check: it was loss, or a peer that
		// stalled, and so may every silence above it be. Search above it
		// again up to the top, with quick rounds: cheaper than re-checking
		// each of those silences with a full one.
		s.hi = s.limit + 1
		for size := range s.silent {
			if size > s.lo {
				delete(s.silent, size)
			}
		}
		s.verified = false
	}
	for _, size := range slices.Sorted(maps.Keys(res)) {
		o := res[size]
		if o.passed {
			lost := s.silent[size] // it failed before: that was loss
			if o.late {
				lost-- // but this one was only late
			}
			s.lost += max(lost, 0)
			delete(s.silent, size)
			continue
		}
		if !o.tooBig && !o.local {
			s.silent[size] += o.sent
		}
		if size < s.lo {
			// Failed although a larger size passed: loss, not a limit.
			s.lost += o.sent
			continue
		}
		if size < s.hi {
			s.hi = size
		}
	}
}

// afterRound handles an unanswered start: it reports false when the
// search ends here.
func (s *search) afterRound(ctx context.Context, round int) bool {
	if s.patient {
		s.patient = false
		s.patience++
		if s.lo == 0 {
			// Not even the smallest probe: ask once more, then call
			// the path unreachable. On a machine loaded past its
			// cores (256 lab agents on two) an agent was seen silent
			// for longer than one patient round.
			s.patient = s.patience < patientRounds && s.unreach == "" && ctx.Err() == nil
			return s.patient
		}
		s.hi, s.again, s.verified = s.limit+1, true, false
	}
	if round == 0 && s.lo == 0 {
		if s.unreach != "" || ctx.Err() != nil {
			return false // an ICMP error said so: unreachable
		}
		// Nothing answered within the first window (0.3 s): ask once
		// more with the smallest probe and the longest wait before
		// calling the path unreachable. A peer on a loaded machine (an
		// agent among a hundred on two cores while a mesh runs) can
		// miss the first window; a dead path costs patientRounds
		// times MaxTimeout more.
		s.patient = true
	}
	return true
}
