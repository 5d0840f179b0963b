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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res := &Result{Spec: spec, Start: time.Now()}
	dirs := []Direction{Forward}
	switch {
	case spec.Mode == ModeTCP && spec.Bidir:
		dirs = []Direction{Forward, Reverse}
	case spec.Reverse && spec.Mode != ModeBlocks:
		dirs = []Direction{Reverse}
	}
	type flow struct {
		dir      Direction
		run      uint64
		conns    []*net.TCPConn
		udp      *net.UDPConn
		cs, ss   *Side
		agentErr error
		meter    *meter // started before the agent starts sending
	}
	flows := make([]*flow, len(dirs))
	defer func() {
		for _, f := range flows {
			if f == nil {
				continue
			}
			for _, c := range f.conns {
				c.Close()
			}
			if f.udp != nil {
				f.udp.Close()
			}
		}
	}()
	setup, cancel := context.WithTimeout(ctx, 3*setupTimeout)
	defer cancel()
	peer := c.RemoteAddr().Addr()
	g := guard{seal: c.Sealer(), open: c.Opener()}
	for i, d := range dirs {
		f := &flow{dir: d}
		flows[i] = f
		role := map[Mode]Role{ModeTCP: RoleReceiver, ModeUDP: RoleReceiver, ModeBlocks: RoleResponder}[spec.Mode]
		if d == Reverse {
			role = RoleSender
		}
		var open OpenReply
		if err := c.Call(setup, KindOpen, OpenRequest{Spec: spec, Role: role}, &open); err != nil {
			return nil, err
		}
		f.run = open.Run
		to := netip.AddrPortFrom(peer, open.Port)
		if spec.Mode == ModeTCP {
			for j := 0; j < spec.Parallel; j++ {
				conn, err := c.DialTCP(setup, to, dataKind, open.Run)
				if err != nil {
					return nil, err
				}
				f.conns = append(f.conns, conn.(*net.TCPConn))
			}
			if f.meter, err = startMeter(); err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			if err := c.Call(setup, KindStart, RunRef{Run: open.Run}, nil); err != nil {
				return nil, err
			}
			continue
		}
		f.udp, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
		if err != nil {
			return nil, fmt.Errorf("bench: udp to %s: %w", to, err)
		}
		// Say hello until the agent has started: it learns our data address
		// from the first authenticated datagram.
		helloDone := make(chan struct{})
		go func() {
			hello := make([]byte, wire.HeaderLen)
			for {
				if _, err := c.Sealer().SealPacket(hello, wire.KindHello, open.Run); err == nil {
					f.udp.Write(hello)
				}
				select {
				case <-helloDone:
					return
				case <-time.After(helloEvery):
				}
			}
		}()
		if f.meter, err = startMeter(); err != nil {
			close(helloDone)
			return nil, fmt.Errorf("bench: %w", err)
		}
		err := c.Call(setup, KindStart, RunRef{Run: open.Run}, nil)
		close(helloDone)
		if err != nil {
			return nil, err
		}
	}

	// Run the client ends; then collect the agent's sides.
	opt := func(f *flow) Options {
		o := Options{Guard: g, meter: f.meter}
		if obs != nil {
			d := f.dir
			o.Observer = func(r Role, in Interval) { obs(d, r, in) }
		}
		return o
	}
	// The run's deadline: an end still running then has stalled and is
	// cut, here and at the agent, so --time bounds the run.
	hard := time.Now().Add(spec.Duration + RunGrace(spec))
	runCtx, runCancel := context.WithDeadline(ctx, hard)
	defer runCancel()
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
	// An interrupted client asks the agent to stop and still collects what
	// it measured, within a bounded time; the agent cuts its end at the
	// run's deadline.
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
		for _, sd := range []*Side{f.cs, f.ss} {
			for _, l := range sd.LimitedBy {
				res.LimitedBy = addLimit(res.LimitedBy, l)
			}
			if sd.Cut {
				res.LimitedBy = addLimit(res.LimitedBy, Limit{Limit: LimitDeadline, Detail: fmt.Sprintf(
					"the %s was still running %v after --time %v and was cut there", sd.Role, RunGrace(spec), spec.Duration)})
			}
		}
	}
	res.Judge()
	var errs []error
	for _, f := range flows {
		if f.agentErr != nil {
			errs = append(errs, f.agentErr)
		}
	}
	return res, errors.Join(errs...)
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
