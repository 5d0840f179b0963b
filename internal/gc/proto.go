package gc

import (
	"crypto/rand"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// The agent's request kinds for a run (served by serve_linux.go). The
// coordinator, on its control session with each agent: open (a data
// socket on the node's interconnect address), connect (dial the agents
// this node is to dial and join their runs: one session per pair), start,
// drain (wait until the node's own requests are settled), result (stop and
// report). join comes from another agent, on the pair's session.
const (
	KindOpen    = "gc.open"
	KindConnect = "gc.connect"
	KindJoin    = "gc.join"
	KindStart   = "gc.start"
	KindDrain   = "gc.drain"
	KindResult  = "gc.result"
)

// OpenRequest asks an agent for its part in a run: a data socket on Local
// (one of its addresses; empty: the address the control session arrived
// on).
type OpenRequest struct {
	Spec  Spec   `json:"spec"`
	Local string `json:"local,omitempty"`
}

// OpenReply names the node's run, its data endpoint and its ping endpoint
// (a socket of the ping engine's own, on the same address).
type OpenReply struct {
	Run  uint64 `json:"run"`
	Data string `json:"data"`
	Ping string `json:"ping"`
	MTU  int    `json:"mtu"`
}

// Member is one node of a run as the coordinator tells the others.
type Member struct {
	Agent string `json:"agent"` // control address
	Data  string `json:"data"`  // data endpoint (OpenReply.Data)
	Ping  string `json:"ping"`  // ping endpoint (OpenReply.Ping)
	Run   uint64 `json:"run"`   // its run (OpenReply.Run)
}

// ConnectRequest gives a node its index, the members and the members it
// dials (the others dial it).
type ConnectRequest struct {
	Run     uint64   `json:"run"`
	Self    int      `json:"self"`
	Members []Member `json:"members"`
	Dial    []int    `json:"dial"`
}

// JoinRequest, from another agent on the pair's session, adds that agent's
// node (index From, data endpoint Data, ping endpoint Ping) to run Run.
type JoinRequest struct {
	Run  uint64 `json:"run"`
	From int    `json:"from"`
	Data string `json:"data"`
	Ping string `json:"ping"`
}

// JoinReply gives the joined node's own data and ping endpoints.
type JoinReply struct {
	Data string `json:"data"`
	Ping string `json:"ping"`
}

// pingChannel names the pings' keys among a pair session's (wire.Keys.Sub):
// the ping engine seals with keys of its own, so that its datagrams have a
// sequence and a replay window of their own.
const pingChannel = "gc ping"

// pingPeer is a pair's peer for the ping engine: the session's id, keys
// derived for the pings (sealing with seal, opening with open, of tag
// algorithm tag) and the peer's ping endpoint.
func pingPeer(session uint64, tag string, seal, open []byte, addr netip.AddrPort, live *atomic.Bool) (Peer, error) {
	s, err := wire.NewSealerTag(tag, seal, session)
	if err != nil {
		return Peer{}, err
	}
	o, err := wire.NewOpenerTag(tag, open, session)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Session: session, Seal: s, Open: o, Addr: addr, Live: live}, nil
}

// RunRef names a run in start, drain and result requests; WaitNs bounds
// how long drain waits.
type RunRef struct {
	Run    uint64 `json:"run"`
	WaitNs int64  `json:"wait_ns,omitempty"`
}

// dialer reports whether node i dials node j (i != j) among n: each node
// dials about half of the others, so that no agent holds much more than
// n/2 of a run's sessions.
func dialer(i, j, n int) bool {
	d := ((j-i)%n + n) % n
	return 2*d < n || 2*d == n && i < j
}

// DialPlan lists, per node, the nodes it dials.
func DialPlan(n int) [][]int {
	plan := make([][]int, n)
	for i := range plan {
		for j := 0; j < n; j++ {
			if j != i && dialer(i, j, n) {
				plan[i] = append(plan[i], j)
			}
		}
	}
	return plan
}

// SelfPeer is a node's own entry among its peers (its pings to itself):
// fresh keys and a session id of its own, both directions under one key.
func SelfPeer(addr netip.AddrPort) Peer {
	key := make([]byte, 32)
	rand.Read(key)
	id := wire.RandomID()
	return Peer{Session: id, Seal: wire.NewSealer(key, id), Open: wire.NewOpener(key, id), Addr: addr}
}

// drainWait bounds the coordinator's wait for a node to settle after
// Duration: the setup before it started, and the grace.
func drainWait(s Spec) time.Duration { return setupTimeout + Grace(s) + time.Second }
