package gc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// fuzzSpec is the run the receive fuzz targets' node takes part in: two
// nodes, both transfer kinds, pings.
var fuzzSpec = Spec{Duration: 50 * time.Millisecond, Blocks: 64, Outstanding: 4, CurrentShare: 0.5,
	PingInterval: 10 * time.Millisecond, Timeout: 5 * time.Millisecond}

// fuzzSteps brings a fuzz run, once past its setup, to requests in flight.
const fuzzSteps = 40

// ready steps s past its setup (hellos every 20 ms), then fuzzSteps.
func ready(s *sim) {
	for k := 0; k < int(setupTimeout/simStep) && (s.es[0].phase == phaseSetup || s.es[1].phase == phaseSetup); k++ {
		s.step()
	}
	for range fuzzSteps {
		s.step()
	}
}

// fixedSim is a simulated run of two nodes with the same keys and session
// ids every time, so that datagrams captured from one are valid in another.
func fixedSim(t testing.TB) *sim {
	t.Helper()
	var k byte
	var id uint64
	return newSimKeys(t, 2, fuzzSpec, func() []byte { k++; return bytes.Repeat([]byte{k}, 32) }, func() uint64 { id++; return 0x6763_0000 + id })
}

// fuzzSim is a fixedSim fuzzSteps in: node 1's next datagram to node 0 is
// the fuzzer's.
func fuzzSim(t testing.TB) *sim {
	t.Helper()
	s := fixedSim(t)
	ready(s)
	if s.es[0].phase != phaseIssue || !s.es[0].proven[1] || s.es[0].busy == 0 {
		t.Fatalf("node 0 after %d steps: phase %d, proven %v, %d in flight", fuzzSteps, s.es[0].phase, s.es[0].proven, s.es[0].busy)
	}
	return s
}

// capture returns the datagrams node 1 sends node 0 in a fixedSim after
// fuzzSteps: valid ones for a fuzzSim, one of each type and size.
func capture(t testing.TB) [][]byte {
	s := fixedSim(t)
	var got [][]byte
	seen := map[string]bool{}
	on := false
	s.drop = func(from, to int, data []byte) bool {
		k := fmt.Sprint(data[wire.HeaderLen], len(data))
		if on && from == 1 && to == 0 && !seen[k] {
			seen[k] = true
			got = append(got, append([]byte(nil), data...))
		}
		return false
	}
	ready(s)
	on = true
	for range 1500 {
		s.step()
	}
	return got
}

// checkTaken holds what node 0 did with a datagram of n bytes (its
// answers after the queue's first queued datagrams): every
// answer queued to node 1 no larger than it unless it asked for a block,
// and its result still one that Validate accepts.
func checkTaken(t *testing.T, s *sim, queued, n int, asked bool) {
	t.Helper()
	e := s.es[0]
	e.flush()
	for _, p := range s.q[queued:] {
		if p.from == 0 && p.to == 1 && len(p.data) > n && !(asked && msgType(p.data[wire.HeaderLen]) == msgBlock) {
			t.Fatalf("a %d-byte datagram answered with %d bytes (type %d)", n, len(p.data), p.data[wire.HeaderLen])
		}
	}
	e.res.IssueNs = s.now.Sub(e.issueStart).Nanoseconds() // simulated time, not the clock finish reads
	if err := e.finish().Validate(0, 2, e.spec); err != nil {
		t.Fatalf("node 0's own result: %v", err)
	}
}

// asks reports whether a datagram of type t asks for a block (which is
// larger than the request: the run was asked for over the control session).
func asks(t msgType) bool { return t == msgRequest || t == msgForward }

// FuzzReceive feeds node 0 arbitrary datagrams from node 1's address (or
// another): each is refused and counted once, or it was sealed with node
// 1's keys for the pair's session; node 0's answers never outgrow what
// came in, and its result stays valid.
func FuzzReceive(f *testing.F) {
	for _, p := range capture(f) {
		f.Add(p, true)
		f.Add(p, false)
		f.Add(p[:len(p)-1], true)
	}
	f.Add([]byte("IL\x01"), true)
	f.Fuzz(func(t *testing.T, pkt []byte, fromPeer bool) {
		s := fuzzSim(t)
		e := s.es[0]
		from := s.addr[1]
		if !fromPeer {
			from = netip.AddrPortFrom(from.Addr(), from.Port()+1)
		}
		// A fresh opener of the same keys says whether pkt is authentic.
		authentic := false
		if _, err := fixedSim(t).es[0].peers[1].Open.Open(pkt); err == nil {
			authentic = true
		}
		dropped, queued := e.res.Dropped, len(s.q)
		e.receive(bytes.Clone(pkt), from, s.now)
		switch d := e.res.Dropped - dropped; {
		case d == 1:
		case d == 0 && authentic && fromPeer:
		default:
			t.Fatalf("%d bytes (authentic %v, from the peer %v): dropped %d times", len(pkt), authentic, fromPeer, d)
		}
		checkTaken(t, s, queued, len(pkt), len(pkt) > wire.HeaderLen && asks(msgType(pkt[wire.HeaderLen])))
	})
}

// FuzzReceiveSealed feeds node 0 arbitrary gc messages sealed with node
// 1's keys, as a peer holding the session's keys could send: what does not
// fit the run is refused, a block completes only a request in flight with
// its id and block, a pong only the ping it echoes.
func FuzzReceiveSealed(f *testing.F) {
	for _, p := range capture(f) {
		f.Add(p[wire.HeaderLen:])
	}
	for _, m := range []msg{{Type: msgLostQ, Requester: 1}, {Type: msgLostA, Server: 1}, {Type: msgForward, Hops: 3, Requester: 1}, {Type: msgMax + 1}} {
		b := make([]byte, msgLen)
		m.put(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := fuzzSim(t)
		e := s.es[0]
		pkt := make([]byte, wire.HeaderLen+len(body))
		copy(pkt[wire.HeaderLen:], body)
		if len(pkt) < HeaderLen {
			return // SealPacket wants the whole header; shorter ones are FuzzReceive's
		}
		if _, err := s.es[1].peers[0].Seal.SealPacket(pkt, dataKind, 0); err != nil {
			t.Fatal(err)
		}
		var m msg
		parsed := m.parse(body) == nil
		inFlight := map[[2]uint64]bool{}
		for _, sl := range e.slots {
			if sl.busy && !sl.lost {
				inFlight[[2]uint64{sl.id, uint64(sl.block)}] = true
			}
		}
		ping := e.pings[1]
		queued := len(s.q)
		dropped, received, pongs := e.res.Dropped, e.res.From[1].Received, e.res.Pings[1][0].Count+e.res.Pings[1][1].Count
		e.receive(pkt, s.addr[1], s.now)
		switch {
		case e.res.Dropped-dropped > 1, !parsed && e.res.Dropped == dropped, len(pkt) > e.maxPacket && e.res.Dropped == dropped:
			t.Fatalf("%+v (parsed %v, %d bytes): dropped %d times", m, parsed, len(pkt), e.res.Dropped-dropped)
		case e.res.From[1].Received != received && (m.Type != msgBlock || !inFlight[[2]uint64{m.ID, uint64(m.Block)}]):
			t.Fatalf("%+v taken as a block of a request in flight", m)
		case e.res.Pings[1][0].Count+e.res.Pings[1][1].Count != pongs && (m.Type != msgPong || !(ping[0].waiting && ping[0].id == m.ID || ping[1].waiting && ping[1].id == m.ID)):
			t.Fatalf("%+v taken as a ping's echo", m)
		}
		checkTaken(t, s, queued, len(pkt), parsed && asks(m.Type))
	})
}

// FuzzNodeResult feeds Validate and Build arbitrary node results (as the
// agent's JSON answer): what Validate accepts, Build reports without a
// panic, in JSON (no NaN nor infinity).
func FuzzNodeResult(f *testing.F) {
	spec, runs := loopbackRuns(f)
	for _, nr := range runs {
		b, err := json.Marshal(nr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"index":0,"from":[{},{},{}],"routed":[[0,0,0],[0,0,0],[0,0,0]],"served":[[0,0],[0,0],[0,0]],"pings":[[{},{}],[{},{}],[{},{}]],"unproven":[2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Build reads the other nodes' results, never writes them.
		runs := slices.Clone(runs)
		var nr NodeRun
		if json.Unmarshal(data, &nr) != nil || nr.Validate(0, 3, spec) != nil {
			return
		}
		runs[0] = &nr
		named := []Named{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		r := Build(spec, time.Unix(0, 0), named, runs, nil)
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("report of a valid result: %v", err)
		}
		if err := r.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	})
}
