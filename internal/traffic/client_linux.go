package traffic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/osthread"
	"github.com/interlink/interlink/internal/wire"
)

// RunRemote runs a test against the agent behind c: this process runs the
// client end of each direction, the agent the other, and the agent's Side
// comes back over the control session so the result holds both ends.
// Cancelling ctx stops both ends early; what they measured is still
// returned. Call it on a thread in the client's network namespace (any
// thread of a normal process).
func RunRemote(ctx context.Context, c *agent.Client, spec Spec, obs func(Direction, Role, Interval)) (*Result, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	spec.SplitSync = spec.Mode == ModeBlocks && !spec.NoSplit
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res := &Result{Spec: spec, Start: time.Now()}
	dirs := remoteDirs(spec)
	flows := make([]*remoteFlow, len(dirs))
	defer func() {
		for _, f := range flows {
			f.close()
		}
	}()
	setup, cancel := context.WithTimeout(ctx, 3*setupTimeout)
	defer cancel()
	g := guard{seal: c.Sealer(), open: c.Opener()}
	for i, d := range dirs {
		flows[i] = &remoteFlow{dir: d}
		if err := flows[i].open(setup, c, spec); err != nil {
			return nil, err
		}
	}
	// The run's deadline: an end still running then has stalled and is
	// cut, here and at the agent, so --time bounds the run.
	hard := time.Now().Add(spec.Duration + RunGrace(spec))
	runCtx, runCancel := context.WithDeadline(ctx, hard)
	defer runCancel()
	runClientEnds(ctx, runCtx, spec, flows, func(f *remoteFlow) Options {
		o := Options{Guard: g, meter: f.meter, awake: f.awake}
		if obs != nil {
			d := f.dir
			o.Observer = func(r Role, in Interval) { obs(d, r, in) }
		}
		return o
	})
	collectAgentSides(ctx, c, res, flows, hard)
	res.Judge()
	var errs []error
	for _, f := range flows {
		if f.agentErr != nil {
			errs = append(errs, f.agentErr)
		}
	}
	return res, errors.Join(errs...)
}

// remoteDirs are the directions of a remote run, one flow each.
func remoteDirs(spec Spec) []Direction {
	switch {
	case spec.Mode == ModeTCP && spec.Bidir:
		return []Direction{Forward, Reverse}
	case spec.Reverse && spec.Mode != ModeBlocks:
		return []Direction{Reverse}
	}
	return []Direction{Forward}
}

// remoteFlow is one direction of a remote run: the agent's run, the
// client's data sockets, and both ends' Sides.
type remoteFlow struct {
	dir      Direction
	run      uint64
	conns    []*net.TCPConn
	udp      *net.UDPConn
	cs, ss   *Side
	agentErr error
	meter    *meter // started before the agent starts sending
	awake    *awake // the requester's receive path awake, measured before it
}

func (f *remoteFlow) close() {
	if f == nil {
		return
	}
	for _, c := range f.conns {
		c.Close()
	}
	if f.udp != nil {
		f.udp.Close()
	}
}

// open asks the agent to open its end of f, connects the data sockets
// (tcp streams, or a udp socket that says hello) and starts the agent's
// end, the client's meter started just before.
func (f *remoteFlow) open(setup context.Context, c *agent.Client, spec Spec) error {
	role := map[Mode]Role{ModeTCP: RoleReceiver, ModeUDP: RoleReceiver, ModeBlocks: RoleResponder}[spec.Mode]
	if f.dir == Reverse {
		role = RoleSender
	}
	var open OpenReply
	if err := c.Call(setup, KindOpen, OpenRequest{Spec: spec, Role: role}, &open); err != nil {
		return err
	}
	f.run = open.Run
	to := netip.AddrPortFrom(c.RemoteAddr().Addr(), open.Port)
	if spec.Mode == ModeTCP {
		for j := 0; j < spec.Parallel; j++ {
			conn, err := c.DialTCP(setup, to, dataKind, open.Run)
			if err != nil {
				return err
			}
			f.conns = append(f.conns, conn.(*net.TCPConn))
		}
		var err error
		if f.meter, err = startMeter(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		return c.Call(setup, KindStart, RunRef{Run: open.Run}, nil)
	}
	var err error
	f.udp, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	if err != nil {
		return fmt.Errorf("bench: udp to %s: %w", to, err)
	}
	if spec.Mode == ModeBlocks {
		aw := awakeFor(spec, requesterDatagram)
		f.awake = &aw
	}
	helloDone := sayHello(c, f.udp, open.Run)
	defer close(helloDone)
	if f.meter, err = startMeter(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return c.Call(setup, KindStart, RunRef{Run: open.Run}, nil)
}

// sayHello says hello on conn every helloEvery until the returned channel
// is closed (the agent has started): the agent learns the client's data
// address from the first authenticated datagram. A repeat can arrive after
// the agent's end began; it skips those (Guard.Hello).
func sayHello(c *agent.Client, conn *net.UDPConn, run uint64) chan<- struct{} {
	done := make(chan struct{})
	go func() {
		hello := make([]byte, wire.HeaderLen)
		for {
			if _, err := c.Sealer().SealPacket(hello, wire.KindHello, run); err == nil {
				conn.Write(hello)
			}
			select {
			case <-done:
				return
			case <-time.After(helloEvery):
			}
		}
	}()
	return done
}

// runClientEnds runs the client end of every flow, each on its own thread
// in this thread's network namespace, until all are done; an end still
// running at runCtx's deadline (not ctx's cancellation) is marked cut.
func runClientEnds(ctx, runCtx context.Context, spec Spec, flows []*remoteFlow, opt func(*remoteFlow) Options) {
	var wg sync.WaitGroup
	for _, f := range flows {
		wg.Add(1)
		err := goInThisNetns(func() {
			defer wg.Done()
			switch {
			case spec.Mode == ModeTCP && f.dir == Forward:
				f.cs = SendTCP(runCtx, spec, f.conns, opt(f))
			case spec.Mode == ModeTCP:
				f.cs = ReceiveTCP(runCtx, spec, f.conns, opt(f))
			case spec.Mode == ModeBlocks:
				f.cs = Request(runCtx, spec, f.udp, opt(f))
			case f.dir == Forward:
				f.cs = SendUDP(runCtx, spec, f.udp, opt(f))
			default:
				f.cs = ReceiveUDP(runCtx, spec, f.udp, opt(f))
			}
		})
		if err != nil {
			wg.Done()
			f.cs = &Side{Role: "unknown", Error: err.Error()}
		}
	}
	wg.Wait()
	if ctx.Err() == nil && runCtx.Err() != nil {
		for _, f := range flows {
			if f.cs.Error == "cancelled" {
				markCut(f.cs)
			}
		}
	}
}

// collectAgentSides asks the agent for its Side of every flow and adds
// each flow's summary and limits to res. An interrupted client asks the
// agent to stop and still collects what it measured, within a bounded
// time; the agent cuts its end at the run's deadline (hard).
func collectAgentSides(ctx context.Context, c *agent.Client, res *Result, flows []*remoteFlow, hard time.Time) {
	spec := res.Spec
	stop := ctx.Err() != nil
	wait := max(time.Until(hard), time.Millisecond)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), wait+setupTimeout)
	defer rcancel()
	for _, f := range flows {
		var side Side
		if err := c.Call(rctx, KindResult, RunRef{Run: f.run, Stop: stop, WaitNs: int64(wait)}, &side); err != nil {
			f.agentErr = err
			f.ss = &Side{Role: "unknown", Error: err.Error()}
		} else {
			f.ss = &side
		}
		res.Flows = append(res.Flows, Summarize(spec, f.dir, f.cs, f.ss))
	}
	collectLimits(res)
}

// LinkRate reads the speed of the interface that holds addr (the local end
// of a path) from sysfs, in bit/s; 0 when unknown (virtual interfaces
// without a speed, or a down link).
func LinkRate(addr netip.Addr) int64 {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0
	}
	for _, ifc := range ifs {
		as, _ := ifc.Addrs()
		for _, a := range as {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr() == addr {
				b, err := os.ReadFile("/sys/class/net/" + ifc.Name + "/speed")
				if err != nil {
					return 0
				}
				// Not the number as read: 3.10 prints an unknown speed
				// as 4294967295.
				return inventory.ParseSpeed(string(b))
			}
		}
	}
	return 0
}

// startNetns is the network namespace the process started in, read while
// package initialisation runs on the main thread before anything switches
// namespaces: the threads of the runtime's pool are in it (a thread that
// enters another for good is discarded, osthread.Spent). Not
// /proc/self/ns/net, which is the main thread's now: when the caller of
// goInThisNetns is the main thread inside a lab node, that names the node,
// and a plain goroutine would have run the end in the start namespace.
var startNetns, _ = os.Readlink(threadNetns())

// threadNetns is the calling thread's network namespace file, through
// /proc/self/task/TID rather than /proc/thread-self, which kernels before
// 3.17 (RHEL/OL 7) lack.
func threadNetns() string {
	return fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
}

// goInThisNetns runs fn on a new goroutine locked to a thread in the
// calling thread's network namespace, so an end started from a thread in a
// lab node meters that node's counters (a new goroutine would otherwise run
// in the process's namespace). When the two are the same, as in a normal
// process, nothing needs switching (and no privilege).
func goInThisNetns(fn func()) error {
	here, err := os.Readlink(threadNetns())
	if err != nil || startNetns == "" || here == startNetns {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			fn()
		}()
		return nil
	}
	ns, err := os.Open(threadNetns())
	if err != nil {
		return fmt.Errorf("bench: network namespace: %w", err)
	}
	errc := make(chan error, 1)
	// The thread changes namespace, so it must end with this work rather
	// than return to the runtime's pool, and must not be the main thread.
	osthread.Spent(func() {
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("bench: enter network namespace: %w", err)
			return
		}
		errc <- nil
		fn()
	})
	return <-errc
}
