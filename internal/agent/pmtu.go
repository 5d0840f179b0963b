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
	c, err := Dial(ctx, req.Agent, s.Token(), DialOptions{Software: s.srv.cfg.Software + " (for mesh)"})
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
	var rev pmtu.Result
	revErr := make(chan error, 1)
	go func() {
		revErr <- c.Call(ctx, KindPMTUProbe, PMTUProbe{Endpoint: ep.String(), Options: ropt}, &rev)
	}()
	fwd, err := pmtu.Run(ctx, k, fopt.options())
	fwd.Direction = pmtu.Forward
	out := []pmtu.Result{fwd}
	rerr := <-revErr
	if err != nil {
		return out, err
	}
	var re *RemoteError
	if errors.As(rerr, &re) && strings.Contains(re.Msg, noPeerYet) && fwd.Verdict != pmtu.Unreachable {
		// The hellos were lost, the forward probes were not: now the
		// agent knows where to probe.
		rerr = c.Call(ctx, KindPMTUProbe, PMTUProbe{Endpoint: ep.String(), Options: ropt}, &rev)
	}
	if rerr != nil {
		if fwd.Verdict == pmtu.Unreachable {
			// Nothing of ours reached the agent, so it has no proven
			// address to probe: the reverse path is as unknown as the
			// forward one.
			return append(out, pmtu.Result{Direction: pmtu.Reverse, From: ep.Addr().String(), To: source.String(),
				Method: "udp", Family: fwd.Family, HeaderBytes: fwd.HeaderBytes, Verdict: pmtu.Unreachable, PeerMTU: localMTU,
				Detail: "not probed: no datagram from this host reached the agent, so it has no proven address to probe back"}), nil
		}
		return out, fmt.Errorf("reverse direction: %w", rerr)
	}
	return append(out, rev), nil
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
