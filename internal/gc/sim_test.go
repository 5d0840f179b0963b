package gc

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// sim drives engines over a simulated network in simulated time: every
// datagram takes one step (hop) to arrive, unless drop says it is lost.
// Nothing here is measured from a clock, so the tests are exact.
type sim struct {
	t    testing.TB
	es   []*engine
	addr []netip.AddrPort
	now  time.Time
	q    []simPkt
	drop func(from, to int, data []byte) bool
}

type simPkt struct {
	from, to int
	data     []byte
}

const simStep = 10 * time.Microsecond

func key() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

func newSim(t *testing.T, n int, spec Spec) *sim {
	t.Helper()
	return newSimKeys(t, n, spec, key, wire.RandomID)
}

// newSimKeys is newSim with the pairs' keys and session ids from newKey
// and newID (fixed ones make a run's datagrams the same every time).
func newSimKeys(t testing.TB, n int, spec Spec, newKey func() []byte, newID func() uint64) *sim {
	t.Helper()
	spec, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{t: t, now: time.Unix(1_000_000, 0), addr: make([]netip.AddrPort, n)}
	peers := make([][]Peer, n)
	for i := range s.addr {
		s.addr[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, 0, byte(i + 1)}), 9000)
		peers[i] = make([]Peer, n)
	}
	for i := 0; i < n; i++ {
		// The node's own entry, as SelfPeer makes it.
		self, id := newKey(), newID()
		peers[i][i] = Peer{Session: id, Seal: wire.NewSealer(self, id), Open: wire.NewOpener(self, id), Addr: s.addr[i]}
		for j := i + 1; j < n; j++ {
			kij, kji, id := newKey(), newKey(), newID()
			peers[i][j] = Peer{Session: id, Seal: wire.NewSealer(kij, id), Open: wire.NewOpener(kji, id), Addr: s.addr[j]}
			peers[j][i] = Peer{Session: id, Seal: wire.NewSealer(kji, id), Open: wire.NewOpener(kij, id), Addr: s.addr[i]}
		}
	}
	for i := 0; i < n; i++ {
		e := newEngine(spec, i, peers[i], 9000, uint64(i+1), s.now)
		e.send = func(outs []outMsg) error {
			for _, o := range outs {
				s.q = append(s.q, simPkt{from: i, to: o.to, data: append([]byte(nil), o.buf[:o.n]...)})
			}
			return nil
		}
		s.es = append(s.es, e)
	}
	return s
}

// step advances the clock one hop: every engine does what is due, then
// the datagrams sent in the previous step arrive.
func (s *sim) step() {
	s.now = s.now.Add(simStep)
	q := s.q
	s.q = nil
	for _, p := range q {
		if s.drop != nil && s.drop(p.from, p.to, p.data) {
			continue
		}
		s.es[p.to].receive(p.data, s.addr[p.from], s.now)
	}
	for i, e := range s.es {
		e.flush()
		e.tick(s.now)
		e.flush()
		// Once tick has done what was due, the next work is later: a
		// deadline not after now would spin the node's loop.
		if dl := e.deadline(s.now); !dl.After(s.now) {
			s.t.Fatalf("node %d in phase %d: deadline %v is not after now", i, e.phase, s.now.Sub(dl))
		}
	}
}

// run steps until every engine has settled (bounded by the run's own
// limits) and builds the report.
func (s *sim) run(t *testing.T) *Report {
	t.Helper()
	spec := s.es[0].spec
	limit := int((setupTimeout + spec.Duration + drainWait(spec)) / simStep)
	for k := 0; k < limit; k++ {
		done := true
		for _, e := range s.es {
			done = done && e.phase == phaseServe
		}
		if done {
			break
		}
		s.step()
	}
	runs := make([]*NodeRun, len(s.es))
	named := make([]Named, len(s.es))
	for i, e := range s.es {
		if e.phase != phaseServe {
			t.Fatalf("node %d did not settle (phase %d)", i, e.phase)
		}
		runs[i] = e.finish()
		named[i] = Named{Name: fmt.Sprintf("node%d", i+1), Agent: s.addr[i].String()}
	}
	return Build(spec, s.now, named, runs, nil)
}

func pairOf(r *Report, req, srv string) Pair {
	for _, p := range r.Pairs {
		if p.Requester == req && p.Server == srv {
			return p
		}
	}
	return Pair{}
}

func TestSimThreeNodes(t *testing.T) {
	s := newSim(t, 3, Spec{Duration: 50 * time.Millisecond, Blocks: 300, Outstanding: 4, PingInterval: 10 * time.Millisecond})
	r := s.run(t)
	two, three := r.Total.TwoWay, r.Total.ThreeWay
	if two == nil || three == nil {
		t.Fatalf("2-way %+v, 3-way %+v", two, three)
	}
	t.Logf("received %d, 3-way %.1f %%, local %d; 2-way p50 %v, 3-way p50 %v", r.Total.Received, r.Total.ThreeWayPercent, r.Total.LocalHits,
		time.Duration(two.P50), time.Duration(three.P50))
	// A 2-way transfer is two hops (request, block), a 3-way one three
	// (within the histogram's precision, 0.1 %).
	near := func(v int64, hops int) bool {
		return v >= int64(hops)*int64(simStep) && v <= int64(hops)*int64(simStep)*1001/1000
	}
	if !near(two.Min, 2) || !near(two.Max, 2) || !near(three.Min, 3) || !near(three.Max, 3) {
		t.Errorf("hops: 2-way %v..%v, 3-way %v..%v", time.Duration(two.Min), time.Duration(two.Max), time.Duration(three.Min), time.Duration(three.Max))
	}
	for _, p := range r.Pairs {
		if !p.Balanced || p.Lost != 0 || p.Received == 0 || p.ThreeWay == nil {
			t.Errorf("%s <- %s: %+v", p.Requester, p.Server, p)
		}
	}
	for _, p := range r.Pings {
		if p.Small.Count < 4 || p.Large.Count < 4 || p.Small.Lost+p.Large.Lost != 0 {
			t.Errorf("pings %s -> %s: %+v %+v", p.Node, p.Target, p.Small, p.Large)
		}
	}
	if r.Verdict != VerdictOK {
		t.Errorf("verdict %s %+v", r.Verdict, r.Problems)
	}
}

func TestSimTwoNodesNoThreeWay(t *testing.T) {
	s := newSim(t, 2, Spec{Duration: 50 * time.Millisecond, Blocks: 50, Outstanding: 4, CurrentShare: 0.5})
	r := s.run(t)
	if r.Total.ThreeWay != nil || r.Total.TwoWay == nil || r.Total.Received < 1000 {
		t.Fatalf("2 nodes: %+v", r.Total)
	}
	for _, p := range r.Pairs {
		if !p.Balanced || p.Lost != 0 {
			t.Errorf("%s <- %s: %+v", p.Requester, p.Server, p)
		}
	}
}

// TestSimBlackhole drops every datagram above 1500 bytes to or from node2,
// as a switch port left at 1500 does: every lost block is on a pair with
// node2, node1 and node3 lose none, every pair balances, and the master's
// answers put each loss on the node that was to ship the block, even when
// the master (node1 or node3) forwarded the request to node2.
func TestSimBlackhole(t *testing.T) {
	s := newSim(t, 3, Spec{Duration: 400 * time.Millisecond, Blocks: 100, Outstanding: 16, CurrentShare: 0.5, Timeout: 20 * time.Millisecond,
		PingInterval: 10 * time.Millisecond}) // a lost ping outlives the interval
	s.drop = func(from, to int, data []byte) bool { return (from == 1 || to == 1) && from != to && len(data) > 1500 }
	r := s.run(t)
	for _, p := range r.Pairs {
		involves := p.Requester == "node2" || p.Server == "node2"
		t.Logf("%s <- %s: requested %d, received %d, lost %d %+v", p.Requester, p.Server, p.Requested, p.Received, p.Lost, p.LostBy)
		if !p.Balanced {
			t.Errorf("%s <- %s: not balanced", p.Requester, p.Server)
		}
		if involves && (p.Lost == 0 || p.Received != 0 || p.LostBy.Block != p.Lost) || !involves && (p.Lost != 0 || p.Received == 0) {
			t.Errorf("%s <- %s: received %d, lost %d", p.Requester, p.Server, p.Received, p.Lost)
		}
	}
	// node3 <- node2 includes blocks node1 mastered and forwarded to node2.
	if s.es[0].res.Routed[2][1] == 0 {
		t.Errorf("node1 forwarded none of node3's requests to node2: the 3-way loss is not covered")
	}
	for _, p := range r.Pings {
		lost := p.Small.Lost + p.Large.Lost
		if (p.Node == "node2") != (p.Target == "node2") && (p.Large.Count != 0 || p.Small.Count == 0) {
			t.Errorf("pings %s -> %s through the blackhole: %+v %+v", p.Node, p.Target, p.Small, p.Large)
		}
		if (p.Node == "node2") == (p.Target == "node2") && lost != 0 {
			t.Errorf("pings %s -> %s lost %d", p.Node, p.Target, lost)
		}
	}
	if r.Verdict != VerdictFailed {
		t.Errorf("verdict %s", r.Verdict)
	}
}

// TestSimRequestsLost drops every request from node1 to node2: node2 never
// saw them, says so, and the loss is node1 <- node2's, as a request lost on
// the way to its master.
func TestSimRequestsLost(t *testing.T) {
	s := newSim(t, 2, Spec{Duration: 100 * time.Millisecond, Blocks: 100, Outstanding: 2, Timeout: 10 * time.Millisecond, Request: 300, NoPing: true,
		CurrentSet: true}) // no ownership moves: node1 never forwards to node2
	s.drop = func(from, to int, data []byte) bool { return from == 0 && to == 1 && len(data) == 300 }
	r := s.run(t)
	p := pairOf(r, "node1", "node2")
	if p.Lost == 0 || p.LostBy.Request != p.Lost || !p.Balanced || p.Received != 0 {
		t.Errorf("node1 <- node2: %+v", p)
	}
	if q := pairOf(r, "node2", "node1"); q.Lost != 0 || q.Received == 0 {
		t.Errorf("node2 <- node1: %+v", q)
	}
}

// The largest run's node results fit the agent's answer (one control
// frame) with their histograms.
func TestSimSixteenNodesFitAFrame(t *testing.T) {
	s := newSim(t, MaxNodes, Spec{Duration: 20 * time.Millisecond, Outstanding: 4, PingInterval: 10 * time.Millisecond, Timeout: 5 * time.Millisecond})
	r := s.run(t)
	for i, e := range s.es {
		b, err := json.Marshal(e.res)
		if err != nil || len(b) > wire.MaxPayload-1024 {
			t.Errorf("node %d: %d bytes, %v", i, len(b), err)
		}
		if i == 0 {
			t.Logf("node result of 16: %d bytes; %d blocks in all", len(b), r.Total.Received)
		}
	}
}

// TestSimLostQuestions loses every first question about a lost block (and
// every block node2 ships): the second question, sent after the requester
// could have reused the slot, must still find the master's record of the
// route, so each loss goes to node2's pairs and every pair balances.
func TestSimLostQuestions(t *testing.T) {
	s := newSim(t, 3, Spec{Duration: 200 * time.Millisecond, Blocks: 100, Outstanding: 8, CurrentShare: 0.5, Timeout: 20 * time.Millisecond, NoPing: true})
	asked := map[uint64]bool{}
	s.drop = func(from, to int, data []byte) bool {
		var m msg
		if m.parse(data[wire.HeaderLen:]) == nil && m.Type == msgLostQ && !asked[m.ID<<8|uint64(from)] {
			asked[m.ID<<8|uint64(from)] = true
			return true
		}
		return from == 1 && len(data) > 1500
	}
	r := s.run(t)
	for _, p := range r.Pairs {
		t.Logf("%s <- %s: requested %d, received %d, lost %d %+v", p.Requester, p.Server, p.Requested, p.Received, p.Lost, p.LostBy)
		if !p.Balanced || p.LostBy.Request+p.LostBy.NoPath != 0 || (p.Server == "node2") != (p.Lost > 0) {
			t.Errorf("%s <- %s: not as expected", p.Requester, p.Server)
		}
	}
}

// Paced at --rate, each node issues its requests at that rate, whatever
// the requests in flight would allow.
func TestSimRate(t *testing.T) {
	s := newSim(t, 3, Spec{Duration: 200 * time.Millisecond, Outstanding: 8, RatePerSec: 5000, NoPing: true})
	r := s.run(t)
	for _, n := range r.Nodes {
		if n.Requests < 995 || n.Requests > 1001 {
			t.Errorf("%s: %d requests in 200 ms at 5000/s", n.Name, n.Requests)
		}
	}
}
