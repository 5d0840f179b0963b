package traffic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"
)

// Place is where one end of a local run lives. Do runs fn on a thread in
// the end's network namespace (a lab node's Node.Do); nil runs fn on a
// locked thread of the current namespace. Addr is the end's address.
type Place struct {
	Do   func(fn func() error) error
	Addr netip.Addr
}

func (p Place) do(fn func() error) error {
	if p.Do != nil {
		return p.Do(fn)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn()
}

// RunLocal runs both ends of a test in this process: the client end at
// client (the end `interlink bench` would run on) and the server end at
// server (the agent's). It is what the lab tests and the comparison
// harness use; each end still runs in its own namespace, on its own
// threads, and measures its own counters. obs, if not nil, sees every
// interval of both ends as it closes (from their hot threads).
func RunLocal(ctx context.Context, spec Spec, client, server Place, obs func(Direction, Role, Interval)) (*Result, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	spec.SplitSync = spec.Mode == ModeBlocks && !spec.NoSplit
	res := &Result{Spec: spec, Start: time.Now()}
	observe := func(d Direction) Options {
		if obs == nil {
			return Options{}
		}
		return Options{Observer: func(r Role, in Interval) { obs(d, r, in) }}
	}
	peerSpec := spec
	peerSpec.CPU = spec.PeerCPU
	if spec.Mode == ModeTCP {
		return runLocalTCP(ctx, res, spec, peerSpec, client, server, observe)
	}
	cc, sc, err := udpPair(client, server)
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	defer sc.Close()
	dir := Forward
	if spec.Reverse && spec.Mode == ModeUDP {
		dir = Reverse
	}
	// Both ends' receive paths awake before either end starts counting:
	// one namespace's counters may hold both ends.
	var cAwake, sAwake *awake
	if spec.Mode == ModeBlocks {
		server.do(func() error { a := awakeFor(peerSpec, responderDatagram); sAwake = &a; return nil })
		client.do(func() error { a := awakeFor(spec, requesterDatagram); cAwake = &a; return nil })
	}
	var cs, ss *Side
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		server.do(func() error {
			switch {
			case spec.Mode == ModeBlocks:
				opt := observe(dir)
				opt.awake = sAwake
				ss = Respond(ctx, peerSpec, sc, opt)
			case dir == Forward:
				ss = ReceiveUDP(ctx, peerSpec, sc, observe(dir))
			default:
				ss = SendUDP(ctx, peerSpec, sc, observe(dir))
			}
			return nil
		})
	}()
	go func() {
		defer wg.Done()
		client.do(func() error {
			switch {
			case spec.Mode == ModeBlocks:
				opt := observe(dir)
				opt.awake = cAwake
				cs = Request(ctx, spec, cc, opt)
			case dir == Forward:
				cs = SendUDP(ctx, spec, cc, observe(dir))
			default:
				cs = ReceiveUDP(ctx, spec, cc, observe(dir))
			}
			return nil
		})
	}()
	wg.Wait()
	res.Flows = []Flow{Summarize(spec, dir, cs, ss)}
	collectLimits(res)
	res.Judge()
	return res, nil
}

func runLocalTCP(ctx context.Context, res *Result, spec, peerSpec Spec, client, server Place, observe func(Direction) Options) (*Result, error) {
	dirs := []Direction{Forward}
	if spec.Bidir {
		dirs = []Direction{Forward, Reverse}
	} else if spec.Reverse {
		dirs = []Direction{Reverse}
	}
	var all []*net.TCPConn
	defer func() {
		for _, c := range all {
			c.Close()
		}
	}()
	type ends struct {
		cc, sc []*net.TCPConn
		cs, ss *Side
	}
	es := make([]ends, len(dirs))
	for i := range dirs {
		c, s, err := tcpPair(client, server, spec.Parallel)
		all = append(append(all, c...), s...)
		if err != nil {
			return nil, err
		}
		es[i].cc, es[i].sc = c, s
	}
	var wg sync.WaitGroup
	for i, d := range dirs {
		e := &es[i]
		wg.Add(2)
		go func() {
			defer wg.Done()
			client.do(func() error {
				if d == Forward {
					e.cs = SendTCP(ctx, spec, e.cc, observe(d))
				} else {
					e.cs = ReceiveTCP(ctx, spec, e.cc, observe(d))
				}
				return nil
			})
		}()
		go func() {
			defer wg.Done()
			server.do(func() error {
				if d == Forward {
					e.ss = ReceiveTCP(ctx, peerSpec, e.sc, observe(d))
				} else {
					e.ss = SendTCP(ctx, peerSpec, e.sc, observe(d))
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, d := range dirs {
		res.Flows = append(res.Flows, Summarize(spec, d, es[i].cs, es[i].ss))
	}
	collectLimits(res)
	res.Judge()
	return res, nil
}

// tcpPair makes n connections from client to server: the listener and the
// dialled sockets are created on threads in their ends' namespaces.
func tcpPair(client, server Place, n int) (cs, ss []*net.TCPConn, err error) {
	var ln *net.TCPListener
	if err := server.do(func() error {
		var err error
		ln, err = net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(server.Addr, 0)))
		return err
	}); err != nil {
		return nil, nil, errorf("tcp listen on %s: %w", server.Addr, err)
	}
	defer ln.Close()
	to := ln.Addr().(*net.TCPAddr).AddrPort()
	for i := 0; i < n; i++ {
		var c *net.TCPConn
		if err := client.do(func() error {
			d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(client.Addr, 0))}
			conn, err := d.Dial("tcp", to.String())
			if err == nil {
				c = conn.(*net.TCPConn)
			}
			return err
		}); err != nil {
			return cs, ss, errorf("tcp connect to %s: %w", to, err)
		}
		cs = append(cs, c)
		ln.SetDeadline(time.Now().Add(5 * time.Second))
		s, err := ln.AcceptTCP()
		if err != nil {
			return cs, ss, errorf("tcp accept on %s: %w", to, err)
		}
		ss = append(ss, s)
	}
	return cs, ss, nil
}

// udpPair makes two UDP sockets, each in its end's namespace, connected to
// each other.
func udpPair(client, server Place) (cc, sc *net.UDPConn, err error) {
	listen := func(p Place) (*net.UDPConn, error) {
		var c *net.UDPConn
		err := p.do(func() error {
			var err error
			c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.Addr, 0)))
			return err
		})
		return c, err
	}
	if sc, err = listen(server); err != nil {
		return nil, nil, errorf("udp listen on %s: %w", server.Addr, err)
	}
	if cc, err = listen(client); err != nil {
		sc.Close()
		return nil, nil, errorf("udp listen on %s: %w", client.Addr, err)
	}
	err = errors.Join(connectUDP(cc, sc.LocalAddr().(*net.UDPAddr).AddrPort()), connectUDP(sc, cc.LocalAddr().(*net.UDPAddr).AddrPort()))
	if err != nil {
		cc.Close()
		sc.Close()
		return nil, nil, errorf("udp connect: %w", err)
	}
	return cc, sc, nil
}
