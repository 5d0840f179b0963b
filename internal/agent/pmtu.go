package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/pmtu"
)

// Path-MTU request kinds served by every agent.
const (
	KindPMTUOpen  = "pmtu.open"  // open a UDP probe endpoint on one of the agent's addresses
	KindPMTUProbe = "pmtu.probe" // probe back from an endpoint to the client: the reverse direction
	KindPMTUPeer  = "pmtu.peer"  // run a two-way test from this agent to another agent (mesh)
)

// PMTUOpen asks the agent for a probe endpoint on Local, one of its own
// addresses (the interconnect address to be probed).
type PMTUOpen struct {
	Local string `json:"local"`
}

// PMTUOpened answers PMTUOpen: the endpoint and the MTU of the interface
// that holds it.
type PMTUOpened struct {
	Addr  string `json:"addr"`
	Iface string `json:"iface"`
	MTU   int    `json:"mtu"`
}

// ProbeOptions are the search options that cross the wire.
type ProbeOptions struct {
	Tries   int `json:"tries,omitempty"`
	Max     int `json:"max,omitempty"`
	Expect  int `json:"expect,omitempty"`
	PeerMTU int `json:"peer_mtu,omitempty"`
}

func (o ProbeOptions) options() pmtu.Options {
	return pmtu.Options{Tries: min(o.Tries, 10), Max: o.Max, Expect: o.Expect, PeerMTU: o.PeerMTU}
}

// PMTUProbe asks the agent to probe back to the client from the endpoint
// Endpoint (an address PMTUOpened returned).
type PMTUProbe struct {
	Endpoint string       `json:"endpoint"`
	Options  ProbeOptions `json:"options"`
}

// PMTUPeer asks the agent to test the path to another agent: its control
// address, the address to probe there, and the local address to probe from
// (zero: chosen by routing).
type PMTUPeer struct {
	Agent   string       `json:"agent"`
	Target  string       `json:"target"`
	Source  string       `json:"source,omitempty"`
	Options ProbeOptions `json:"options"`
}

func init() {
	Register(KindPMTUOpen, servePMTUOpen)
	Register(KindPMTUProbe, servePMTUProbe)
	Register(KindPMTUPeer, servePMTUPeer)
}

func servePMTUOpen(ctx context.Context, s *Session, body json.RawMessage) (any, error) {
	var req PMTUOpen
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad pmtu.open: %w", err)
	}
	local := s.LocalAddr().Addr()
	if req.Local != "" {
		a, err := netip.ParseAddr(req.Local)
		if err != nil {
			return nil, fmt.Errorf("pmtu.open: local address %q: %w", req.Local, err)
		}
		local = a
	}
	uc, err := pmtu.ListenUDP(netip.AddrPortFrom(local, 0))
	if err != nil {
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			// The client's --target (or a mesh node's @ADDR) is on
			// another node than this agent's.
			return nil, fmt.Errorf("the agent's node has no address %s: give --target (or @ADDR) an address of that node; 'ip -br addr' there lists them", local)
		}
		return nil, fmt.Errorf("%w (is %s an address of the agent's node?)", err, local)
	}
	k, err := pmtu.NewConn(uc, s.Sealer(), s.Opener(), netip.AddrPort{}, pmtu.Hooks{
		Wait: s.Wait, Allow: s.Allow, In: s.CountIn, Out: s.CountOut, Drop: s.CountDrop, Short: s.CountTruncated,
	})
	if err != nil {
		uc.Close()
		return nil, err
	}
	if err := s.AddEndpoint(k); err != nil {
		k.Close()
		return nil, err
	}
	addr := k.LocalAddr()
	s.Store("pmtu.conn "+addr.String(), k)
	_, iface, mtu := k.Local()
	return PMTUOpened{Addr: addr.String(), Iface: iface, MTU: mtu}, nil
}

// noPeerYet is pmtu.probe's answer before any datagram of the client
// reached the endpoint.
const noPeerYet = "no authenticated datagram has reached the endpoint yet"

func servePMTUProbe(ctx context.Context, s *Session, body json.RawMessage) (any, error) {
	var req PMTUProbe
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad pmtu.probe: %w", err)
	}
	k, _ := s.Load("pmtu.conn " + req.Endpoint).(*pmtu.Conn)
	if k == nil {
		return nil, fmt.Errorf("pmtu.probe: no endpoint %s in this session (send pmtu.open first)", req.Endpoint)
	}
	if !k.Peer().IsValid() {
		return nil, errors.New("pmtu.probe: " + noPeerYet + ", so there is no address to probe")
	}
	r, err := pmtu.Run(ctx, k, req.Options.options())
	r.Direction = pmtu.Reverse
	return r, err
}

func servePMTUPeer(ctx context.Context, s *Session, body json.RawMessage) (any, error) {
	var req PMTUPeer
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad pmtu.peer: %w", err)
	}
	target, err := netip.ParseAddr(req.Target)
	if err != nil {
		return nil, fmt.Errorf("pmtu.peer: target %q: %w", req.Target, err)
	}
	opt := PMTUOptions{Target: target, Probe: req.Options}
	if req.Source != "" {
		if opt.Source, err = netip.ParseAddr(req.Source); err != nil {
			return nil, fmt.Errorf("pmtu.peer: source %q: %w", req.Source, err)
		}
	}
	// This agent becomes a client of the other one, with the same token.
	dopt := DialOptions{Software: s.srv.cfg.Software + " (for mesh)"}
	c, err := Dial(ctx, req.Agent, s.Token(), dopt)
	if Timeout(err) && ctx.Err() == nil {
		// The other agent may be dead, or either of the two was
		// descheduled for seconds (a node at full CPU): ask once more.
		c, err = Dial(ctx, req.Agent, s.Token(), dopt)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.PMTU(ctx, opt)
}

// PMTUOptions tune Client.PMTU.
type PMTUOptions struct {
	// Target is the agent's address to probe (zero: its control address).
	Target netip.Addr
	// Source is the local address to probe from (zero: chosen by routing).
	Source netip.Addr
	// Probe are the search options; PeerMTU is filled in per direction.
	Probe ProbeOptions
	// ForwardOnly skips the reverse direction.
	ForwardOnly bool
}

// PMTU tests the path to the agent in both directions at once: this host
// probes the agent's endpoint (forward) while the agent probes back
// (reverse), each side answering the other's tagged probes with small
// acks. It returns one Result per direction; a failure of the reverse
// request is returned with the forward result.
func (c *Client) PMTU(ctx context.Context, opt PMTUOptions) ([]pmtu.Result, error) {
	target := opt.Target
	if !target.IsValid() {
		target = c.RemoteAddr().Addr()
	}
	var opened PMTUOpened
	if err := c.Call(ctx, KindPMTUOpen, PMTUOpen{Local: target.String()}, &opened); err != nil {
		return nil, err
	}
	ep, err := netip.ParseAddrPort(opened.Addr)
	if err != nil {
		return nil, fmt.Errorf("agent %s: pmtu.open: bad endpoint %q", c.Addr, opened.Addr)
	}
	source := opt.Source
	if !source.IsValid() {
		if source, err = routeSource(ep); err != nil {
			return nil, err
		}
	}
	uc, err := pmtu.ListenUDP(netip.AddrPortFrom(source, 0))
	if err != nil {
		return nil, err
	}
	k, err := pmtu.NewConn(uc, c.Sealer(), c.Opener(), ep, pmtu.Hooks{})
	if err != nil {
		uc.Close()
		return nil, err
	}
	defer k.Close()
	_, _, localMTU := k.Local()

	fopt := opt.Probe
	fopt.PeerMTU = opened.MTU
	if opt.ForwardOnly {
		fwd, err := pmtu.Run(ctx, k, fopt.options())
		fwd.Direction = pmtu.Forward
		return []pmtu.Result{fwd}, err
	}
	// Make sure the agent knows our address before it probes back, even
	// if no forward probe gets through (then the reverse is unreachable
	// too, and says so).
	for range 3 {
		k.Hello()
	}
	time.Sleep(5 * time.Millisecond)
	// Both directions at once: a blackholed path's searches each wait out
	// a probe timeout, and those waits overlap.
	ropt := opt.Probe
	ropt.PeerMTU = localMTU
	w := twoWay{c: c, k: k, fopt: fopt, ropt: ropt, ep: ep, source: source, localMTU: localMTU}
	var rev pmtu.Result
	revErr := make(chan error, 1)
	go func() {
		var err error
		rev, err = w.reverse(ctx)
		revErr <- err
	}()
	fwd, err := w.forward(ctx)
	rerr := <-revErr
	if err != nil {
		return []pmtu.Result{fwd}, err
	}
	return w.settle(ctx, fwd, rev, rerr)
}

// twoWay is one two-way test: this host's probe socket k towards the
// agent's endpoint ep, and each direction's options.
type twoWay struct {
	c          *Client
	k          *pmtu.Conn
	fopt, ropt ProbeOptions
	ep         netip.AddrPort
	source     netip.Addr // k's address
	localMTU   int        // of k's interface
}

// settle returns the two directions' results once both searches ended
// (rerr: the reverse request's failure): a reverse refused for want of a
// datagram is asked again once the forward shows the path carries them,
// and a doubtful direction is searched again (again).
func (w twoWay) settle(ctx context.Context, fwd, rev pmtu.Result, rerr error) ([]pmtu.Result, error) {
	var re *RemoteError
	if errors.As(rerr, &re) && strings.Contains(re.Msg, noPeerYet) {
		if unheard(fwd) {
			// The agent answers, yet neither its endpoint nor our
			// search heard the other: a path that drops everything,
			// or an agent that stalled through both (our datagrams
			// queued unread). It answers now: search once more.
			again, err := w.forward(ctx)
			if fwd = pmtu.Again(fwd, again); err != nil {
				return []pmtu.Result{fwd}, err
			}
		}
		if fwd.Verdict != pmtu.Unreachable {
			// The hellos were lost, the forward probes were not: now
			// the agent knows where to probe.
			rev, rerr = w.reverse(ctx)
		}
	}
	if rerr != nil {
		out := []pmtu.Result{fwd}
		if fwd.Verdict == pmtu.Unreachable {
			// Nothing of ours reached the agent, so it has no proven
			// address to probe: the reverse path is as unknown as the
			// forward one.
			return append(out, pmtu.Result{Direction: pmtu.Reverse, From: w.ep.Addr().String(), To: w.source.String(),
				Method: "udp", Family: fwd.Family, HeaderBytes: fwd.HeaderBytes, Verdict: pmtu.Unreachable, PeerMTU: w.localMTU,
				Detail: "not probed: no datagram from this host reached the agent, so it has no proven address to probe back"}), nil
		}
		return out, fmt.Errorf("reverse direction: %w", rerr)
	}
	return w.again(ctx, fwd, rev)
}

// forward searches this host's direction.
func (w twoWay) forward(ctx context.Context) (pmtu.Result, error) {
	r, err := pmtu.Run(ctx, w.k, w.fopt.options())
	r.Direction = pmtu.Forward
	return r, err
}

// reverse asks the agent to search its direction.
func (w twoWay) reverse(ctx context.Context) (pmtu.Result, error) {
	var r pmtu.Result
	err := w.c.Call(ctx, KindPMTUProbe, PMTUProbe{Endpoint: w.ep.String(), Options: w.ropt}, &r)
	return r, err
}

// again returns the two directions' results, with a doubtful direction
// searched once more when the other one is sure. The two directions'
// probes and acks cross between the same two sockets, so a direction that
// heard nothing, or whose limit rests on a re-check that heard nothing,
// while the other passed, had a peer that stalled (an agent descheduled on
// a loaded host), not a path that drops everything.
func (w twoWay) again(ctx context.Context, fwd, rev pmtu.Result) ([]pmtu.Result, error) {
	switch {
	case doubtful(fwd) && sure(rev):
		again, err := w.forward(ctx)
		if fwd = pmtu.Again(fwd, again); err != nil {
			return []pmtu.Result{fwd}, err
		}
	case doubtful(rev) && sure(fwd):
		again, err := w.reverse(ctx)
		if err != nil {
			return []pmtu.Result{fwd}, fmt.Errorf("reverse direction, searched again: %w", err)
		}
		rev = pmtu.Again(rev, again)
	}
	return []pmtu.Result{fwd, rev}, nil
}

// doubtful reports a direction that heard nothing at all, or whose limit
// rests on a re-check that heard nothing.
func doubtful(r pmtu.Result) bool { return unheard(r) || r.PeerSilent }

// sure reports a direction that heard its peer to the end.
func sure(r pmtu.Result) bool { return r.PathMTU > 0 && !r.PeerSilent }

// unheard reports a direction whose probes all went unanswered.
func unheard(r pmtu.Result) bool {
	return r.Verdict == pmtu.Unreachable && r.Probes > 0 && r.PathMTU == 0
}

// routeSource returns the source address the routing table picks for dst.
func routeSource(dst netip.AddrPort) (netip.Addr, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no route to %s: %w", dst.Addr(), err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), nil
}
