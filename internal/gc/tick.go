package gc

import "time"

// tick does what is due at now: hellos, phase changes, lost blocks and
// their questions, pings and new requests.
func (e *engine) tick(now time.Time) {
	switch e.phase {
	case phaseSetup:
		ready := true
		for p := range e.peers {
			if e.proven[p] && e.heard[p] {
				continue
			}
			ready = false
			if e.peers[p].live() && now.Sub(e.hello[p]) >= helloEvery {
				e.sendHello(p, now)
			}
		}
		if ready || now.Sub(e.start) >= setupTimeout {
			for p := range e.peers {
				if !e.proven[p] {
					e.res.Unproven = append(e.res.Unproven, p)
				}
			}
			e.phase, e.issueStart, e.issueEnd = phaseIssue, now, now.Add(e.spec.Duration)
			// Every ping of the interval at its own time: target by
			// target, the 500 B ones in the first half, the 8 KiB ones in
			// the second.
			for t := range e.pings {
				for c := range 2 {
					e.pings[t][c].due = now.Add(e.spec.PingInterval * time.Duration(c*e.n+t) / time.Duration(2*e.n))
				}
			}
		}
	case phaseIssue:
		if !now.Before(e.issueEnd) {
			e.phase = phaseDrain
			e.res.IssueNs = now.Sub(e.issueStart).Nanoseconds()
		}
	}
	if e.phase == phaseIssue || e.phase == phaseDrain {
		e.expire(now)
		if !e.spec.NoPing {
			e.pingTick(now)
		}
	}
	if e.phase == phaseIssue {
		e.issue(now)
	}
	if e.phase == phaseDrain && e.busy == 0 && !e.pinging() {
		e.phase = phaseServe
		if e.onDrained != nil {
			e.onDrained()
		}
	}
}

func (e *engine) sendHello(p int, now time.Time) {
	e.hello[p] = now
	m := msg{Type: msgHello, Requester: uint8(e.self)}
	if e.proven[p] {
		m.Flags |= flagHeard
	}
	if e.heard[p] {
		m.Flags |= flagDone
	}
	e.emit(p, HeaderLen, &m)
}

// issue fills the free slots with new requests. A block found in the
// node's own cache is a local hit and takes no slot; the picks per call
// are bounded so that a node holding most blocks does not spin.
func (e *engine) issue(now time.Time) {
	for tries := 0; e.busy < len(e.slots) && tries < 4*len(e.slots) && !now.Before(e.nextIssue()); tries++ {
		b, cur := e.pick.next()
		mode := 0
		if cur {
			mode = 1
		}
		m := masterOf(b, e.n)
		to := m
		if m == e.self {
			to = int(e.holder[b])
		}
		if to == e.self || m != e.self && e.isHeld(b) {
			e.res.Local[mode]++
			continue
		}
		i := e.freeSlot()
		e.gens[i]++
		id := e.gens[i]<<slotBits | uint64(i)
		e.slots[i] = slot{id: id, sent: now, block: b, master: m, to: to, current: cur, busy: true}
		e.busy++
		e.res.Requests++
		if !e.proven[to] || !e.peers[to].live() {
			e.slots[i].noPath = true
			continue
		}
		out := msg{Type: msgRequest, Requester: uint8(e.self), Block: b, ID: id, Hops: 2}
		if cur {
			out.Flags = flagCurrent
		}
		if m == e.self {
			// The requester masters the block: it asks the holder itself.
			out.Type = msgForward
			e.routes[e.self][i] = route{gen: genOf(id), server: uint8(to), set: true}
			e.res.Routed[e.self][to]++
			if cur {
				e.holder[b] = uint8(e.self)
			}
		}
		e.emit(to, e.spec.Request, &out)
	}
}

// nextIssue is when the next request may go at Spec.RatePerSec (the
// issue start when unpaced).
func (e *engine) nextIssue() time.Time {
	if e.spec.RatePerSec <= 0 {
		return e.issueStart
	}
	return e.issueStart.Add(time.Duration(float64(e.res.Requests) / e.spec.RatePerSec * float64(time.Second)))
}

func (e *engine) freeSlot() int {
	for i := range e.slots {
		if !e.slots[i].busy {
			return i
		}
	}
	panic("gc: no free slot")
}

// expire declares the blocks not whole in time lost and asks their masters
// where the requests went. A lost request keeps its slot until it is
// settled (its master answered, or queryTries questions went unanswered:
// the loss is then the master's, unconfirmed), so that the master's record
// of the slot's last route still describes it when a question comes late.
func (e *engine) expire(now time.Time) {
	for i := range e.slots {
		s := &e.slots[i]
		switch {
		case !s.busy:
		case !s.lost && now.Sub(s.sent) >= e.spec.Timeout:
			s.lost = true
			if s.current {
				e.res.LostByMode[1]++
			} else {
				e.res.LostByMode[0]++
			}
			switch {
			case s.noPath:
				e.settle(i, &e.res.From[s.to].Lost.NoPath)
			case s.master == e.self:
				e.settle(i, &e.res.From[e.routes[e.self][i].server].Lost.Block)
			default:
				e.ask(s, now)
			}
		case s.lost && now.Sub(s.asked) >= queryEvery:
			if s.tries >= queryTries || !e.peers[s.master].live() {
				e.settle(i, &e.res.From[s.master].Lost.Unconfirmed)
				continue
			}
			e.ask(s, now)
		}
	}
}

func (e *engine) ask(s *slot, now time.Time) {
	s.asked = now
	s.tries++
	e.emit(s.master, HeaderLen, &msg{Type: msgLostQ, Requester: uint8(e.self), Block: s.block, ID: s.id})
}

// settle frees slot i, counting its lost block where counter says.
func (e *engine) settle(i int, counter *int64) {
	*counter++
	e.slots[i].busy = false
	e.busy--
}

// pingTick sends each ping that is due and gives up on pings older than
// the timeout. Each size to each target goes every interval at a time of
// its own (see tick), alone: a ping never waits for another one, nor
// follows one that has just woken the threads at both ends, so every ping
// is a lone round trip, as Oracle's are and as bench --mode blocks --rate
// measures. A ping still out when its next one is due skips that one.
func (e *engine) pingTick(now time.Time) {
	for t := range e.pings {
		for c := range 2 {
			p := &e.pings[t][c]
			if p.waiting && now.Sub(p.sent) >= e.spec.Timeout {
				p.waiting = false
				e.res.Pings[t][c].Lost++
			}
			if e.phase != phaseIssue || now.Before(p.due) {
				continue
			}
			for !now.Before(p.due) {
				p.due = p.due.Add(e.spec.PingInterval)
			}
			if !p.waiting {
				e.sendPing(t, c, now)
			}
		}
	}
}

func (e *engine) sendPing(t, c int, now time.Time) {
	if !e.proven[t] || !e.peers[t].live() {
		return
	}
	e.pingID++
	p := &e.pings[t][c]
	p.id, p.sent, p.waiting = e.pingID, now, true
	size := PingSmall
	if c == 1 {
		size = PingLarge
	}
	e.emit(t, size, &msg{Type: msgPing, Requester: uint8(e.self), ID: e.pingID, Stamp: now.UnixNano()})
}

func (e *engine) pinging() bool {
	for t := range e.pings {
		if e.pings[t][0].waiting || e.pings[t][1].waiting {
			return true
		}
	}
	return false
}

// deadline is when tick has work next (at the latest a hello interval from
// now during the setup).
func (e *engine) deadline(now time.Time) time.Time {
	dl := now.Add(time.Second)
	at := func(t time.Time) {
		if t.Before(dl) {
			dl = t
		}
	}
	switch e.phase {
	case phaseSetup:
		at(now.Add(helloEvery))
		return dl
	case phaseIssue:
		at(e.issueEnd)
		if e.spec.RatePerSec > 0 && e.busy < len(e.slots) {
			// Paced: the next request's time; should the picks of the last
			// tick all have been local hits, a moment later.
			next := e.nextIssue()
			if !next.After(now) {
				next = now.Add(time.Millisecond)
			}
			at(next)
		}
	case phaseServe:
		return dl
	}
	for i := range e.slots {
		switch s := &e.slots[i]; {
		case s.busy && s.lost:
			at(s.asked.Add(queryEvery))
		case s.busy:
			at(s.sent.Add(e.spec.Timeout))
		}
	}
	if !e.spec.NoPing {
		for t := range e.pings {
			for c := range 2 {
				p := e.pings[t][c]
				if p.waiting {
					at(p.sent.Add(e.spec.Timeout))
				}
				if e.phase == phaseIssue {
					at(p.due)
				}
			}
		}
	}
	return dl
}
