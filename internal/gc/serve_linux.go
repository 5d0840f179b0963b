package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/wire"
)

func init() {
	agent.Register(KindOpen, serveOpen)
	agent.Register(KindConnect, serveConnect)
	agent.Register(KindJoin, serveJoin)
	agent.Register(KindStart, serveStart)
	agent.Register(KindDrain, serveDrain)
	agent.Register(KindResult, serveResult)
}

// run is an agent's part in a run: owned by the coordinator's session
// (everything closes when it ends), joined by the agents that dial this one.
type run struct {
	id    uint64
	owner *agent.Session
	spec  Spec
	data  netip.AddrPort
	ping  netip.AddrPort
	mtu   int

	mu        sync.Mutex
	s, ps     *sock // until started; then the node's loops own them
	self      int
	n         int
	peers     map[int]Peer
	pingPeers map[int]Peer
	clients   []*agent.Client // sessions this agent opened to others
	node      *node
	result    *NodeRun
	closed    bool
	once      sync.Once
	held0     time.Duration
}

// runs are the runs of this agent by id, for joins arriving on other
// sessions. A run leaves when its owner's session ends.
var runs = struct {
	sync.Mutex
	m map[uint64]*run
}{m: map[uint64]*run{}}

const runKey = "gc.run"

func ownRun(s *agent.Session, id uint64) (*run, error) {
	r, _ := s.Load(runKey).(*run)
	if r == nil || r.id != id {
		return nil, fmt.Errorf("gc: no run %d in this session (send %s first)", id, KindOpen)
	}
	return r, nil
}

// Close ends the run: the loop stops, the socket and the pair sessions
// this agent opened close. The owner's session calls it when it ends.
func (r *run) Close() error {
	r.once.Do(func() {
		r.mu.Lock()
		r.closed = true
		nd, socks, cs := r.node, []*sock{r.s, r.ps}, r.clients
		r.s, r.ps, r.clients = nil, nil, nil
		r.mu.Unlock()
		if nd != nil {
			r.result = nd.Stop()
			// The session's log line counts the run's datagrams.
			o := r.owner
			for _, e := range nd.engines() {
				o.PacketsIn.Add(e.pktsIn)
				o.BytesIn.Add(e.bytesIn)
				o.PacketsOut.Add(e.pktsOut)
				o.BytesOut.Add(e.bytesOut)
			}
			o.Dropped.Add(r.result.Dropped)
			o.Truncated.Add(r.result.Truncated)
		}
		for _, s := range socks {
			if s != nil {
				s.close()
			}
		}
		for _, c := range cs {
			c.Close()
		}
		runs.Lock()
		delete(runs.m, r.id)
		runs.Unlock()
	})
	return nil
}

func serveOpen(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var req OpenRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindOpen, err)
	}
	spec, err := req.Spec.Normalize()
	if err != nil {
		return nil, err
	}
	if need := setupTimeout + spec.Duration + Grace(spec) + time.Second; need > s.Limits.MaxDuration {
		return nil, fmt.Errorf("gc: --time %v is longer than this agent allows per session (%v, of which %v go to setting up and settling)",
			spec.Duration, s.Limits.MaxDuration, need-spec.Duration)
	}
	if s.Load(runKey) != nil {
		return nil, errors.New("gc: one run per session")
	}
	local := s.LocalAddr().Addr()
	if req.Local != "" {
		if local, err = netip.ParseAddr(req.Local); err != nil {
			return nil, fmt.Errorf("gc: local address %q: %w", req.Local, err)
		}
	}
	sk, data, err := openSock(local)
	if err != nil {
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, fmt.Errorf("gc: the agent's node has no address %s: give NODE@ADDR an address of that node; 'ip -br addr' there lists them", local)
		}
		return nil, fmt.Errorf("%w (is %s an address of the agent's node?)", err, local)
	}
	psk, ping, err := openSock(local)
	if err != nil {
		sk.close()
		return nil, err
	}
	r := &run{id: wire.RandomID(), owner: s, spec: spec, data: data, ping: ping, mtu: mtuOf(local), s: sk, ps: psk,
		peers: map[int]Peer{}, pingPeers: map[int]Peer{}}
	if err := s.AddEndpoint(r); err != nil {
		sk.close()
		psk.close()
		return nil, err
	}
	s.Store(runKey, r)
	runs.Lock()
	runs.m[r.id] = r
	runs.Unlock()
	return OpenReply{Run: r.id, Data: data.String(), Ping: ping.String(), MTU: r.mtu}, nil
}

func checkIndex(i, n int) error {
	if n < 2 || n > MaxNodes || i < 0 || i >= n {
		return fmt.Errorf("gc: node %d of %d: want 2 to %d nodes", i, n, MaxNodes)
	}
	return nil
}

// serveConnect dials the agents this node is to dial, with the cluster's
// token, and joins their runs; it returns when every pair is connected.
func serveConnect(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var req ConnectRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindConnect, err)
	}
	r, err := ownRun(s, req.Run)
	if err != nil {
		return nil, err
	}
	n := len(req.Members)
	if err := checkIndex(req.Self, n); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.n != 0 {
		r.mu.Unlock()
		return nil, errors.New("gc: already connected")
	}
	r.self, r.n = req.Self, n
	r.mu.Unlock()
	for _, j := range req.Dial {
		if j < 0 || j >= n || j == req.Self {
			return nil, fmt.Errorf("gc: cannot dial node %d", j)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(req.Dial))
	for k, j := range req.Dial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = r.dial(ctx, s, j, req.Members[j])
		}()
	}
	wg.Wait()
	return struct{}{}, errors.Join(errs...)
}

func (r *run) dial(ctx context.Context, s *agent.Session, j int, m Member) error {
	c, err := agent.Dial(ctx, m.Agent, s.Token(), agent.DialOptions{Software: s.Software + " (for gc)", Dial: dial})
	if err != nil {
		return fmt.Errorf("node %d: %w", j, err)
	}
	var rep JoinReply
	if err := c.Call(ctx, KindJoin, JoinRequest{Run: m.Run, From: r.self, Data: r.data.String(), Ping: r.ping.String()}, &rep); err != nil {
		c.Close()
		return fmt.Errorf("node %d: %w", j, err)
	}
	addr, err := netip.ParseAddrPort(rep.Data)
	if err != nil || rep.Data != m.Data {
		c.Close()
		return fmt.Errorf("node %d: its agent says its data endpoint is %q, the run was told %q", j, rep.Data, m.Data)
	}
	paddr, err := netip.ParseAddrPort(rep.Ping)
	if err != nil || rep.Ping != m.Ping {
		c.Close()
		return fmt.Errorf("node %d: its agent says its ping endpoint is %q, the run was told %q", j, rep.Ping, m.Ping)
	}
	live := &atomic.Bool{}
	live.Store(true)
	keys := c.Keys.Sub(pingChannel)
	pp, err := pingPeer(c.Session, c.Tag, keys.ClientToAgent, keys.AgentToClient, paddr, live)
	if err != nil {
		c.Close()
		return fmt.Errorf("node %d: %w", j, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return errors.New("gc: run closed")
	}
	r.clients = append(r.clients, c)
	r.peers[j] = Peer{Session: c.Session, Seal: c.Sealer(), Open: c.Opener(), Addr: addr, Live: live}
	r.pingPeers[j] = pp
	return nil
}

// serveJoin adds the dialling agent's node to a run of this agent; the
// pair's datagrams are sealed with this session's keys, and the peer is
// dropped when the session ends.
func serveJoin(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var req JoinRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindJoin, err)
	}
	addr, err := netip.ParseAddrPort(req.Data)
	if err != nil || !addr.IsValid() || addr.Port() == 0 {
		return nil, fmt.Errorf("gc: join: bad data endpoint %q", req.Data)
	}
	paddr, err := netip.ParseAddrPort(req.Ping)
	if err != nil || !paddr.IsValid() || paddr.Port() == 0 {
		return nil, fmt.Errorf("gc: join: bad ping endpoint %q", req.Ping)
	}
	runs.Lock()
	r := runs.m[req.Run]
	runs.Unlock()
	if r == nil {
		return nil, fmt.Errorf("gc: no run %d on this agent", req.Run)
	}
	if req.From < 0 || req.From >= MaxNodes {
		return nil, fmt.Errorf("gc: join from node %d", req.From)
	}
	live := &atomic.Bool{}
	live.Store(true)
	keys := s.Keys.Sub(pingChannel)
	pp, err := pingPeer(s.ID, s.Tag, keys.AgentToClient, keys.ClientToAgent, paddr, live)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.peers[req.From]; dup || r.closed || r.node != nil {
		return nil, fmt.Errorf("gc: node %d cannot join run %d now", req.From, req.Run)
	}
	r.peers[req.From] = Peer{Session: s.ID, Seal: s.Sealer(), Open: s.Opener(), Addr: addr, Live: live}
	r.pingPeers[req.From] = pp
	context.AfterFunc(s.Context(), func() { live.Store(false) })
	return JoinReply{Data: r.data.String(), Ping: r.ping.String()}, nil
}

func serveStart(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var ref RunRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindStart, err)
	}
	r, err := ownRun(s, ref.Run)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 || r.node != nil || r.s == nil {
		return nil, errors.New("gc: run not connected, or already started")
	}
	peers, pingPeers := make([]Peer, r.n), make([]Peer, r.n)
	var missing []int
	for i := range peers {
		p, ok := r.peers[i]
		pp := r.pingPeers[i]
		switch {
		case i == r.self:
			p, pp = SelfPeer(r.data), SelfPeer(r.ping)
		case !ok:
			missing = append(missing, i)
		}
		peers[i], pingPeers[i] = p, pp
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("gc: nodes %v never joined", missing)
	}
	r.held0, _ = s.RateHeld()
	r.node = startNode(s.Context(), r.spec, r.self, peers, pingPeers, r.s, r.ps, r.mtu, wire.RandomID(), s.Wait)
	r.s, r.ps = nil, nil
	return struct{}{}, nil
}

func serveDrain(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var ref RunRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindDrain, err)
	}
	r, err := ownRun(s, ref.Run)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	nd := r.node
	r.mu.Unlock()
	if nd == nil {
		return nil, errors.New("gc: run not started")
	}
	t := time.NewTimer(min(time.Duration(ref.WaitNs), time.Minute))
	defer t.Stop()
	select {
	case <-nd.drained:
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return struct{}{}, nil
}

func serveResult(ctx context.Context, s *agent.Session, body json.RawMessage) (any, error) {
	var ref RunRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("bad %s: %w", KindResult, err)
	}
	r, err := ownRun(s, ref.Run)
	if err != nil {
		return nil, err
	}
	r.Close()
	if r.result == nil {
		return nil, errors.New("gc: run not started")
	}
	held, _ := s.RateHeld()
	r.result.RateWaitedNs = (held - r.held0).Nanoseconds()
	return fit(r.result), nil
}

// fit keeps a node's result within one control frame: should it not fit
// (it holds one entry per node, MaxNodes at most, and two compressed
// histograms), the histograms go first; the cluster percentiles then lack
// this node's blocks, and the node says so.
func fit(nr *NodeRun) *NodeRun {
	if b, err := json.Marshal(nr); err == nil && len(b) > wire.MaxPayload-1024 {
		nr.Hist = [2]string{}
		nr.Error = "its receive-time histograms did not fit the agent's answer: the cluster-wide receive times leave its blocks out"
	}
	return nr
}
