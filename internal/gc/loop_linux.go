package gc

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/traffic"
)

// node runs one engine on its socket: one locked thread (loop) does
// everything, as an LMS process does, so the node's CPU is that thread's.
type node struct {
	e    *engine
	s    *sock
	wait func(ctx context.Context, n int) error // the control session's rate limit

	stop    atomic.Bool
	drained chan struct{}
	done    chan struct{}
	run     *NodeRun
}

// hardStop bounds a node that nobody stops: its run's duration, the setup,
// the grace, and time for a slow coordinator to collect.
func hardStop(s Spec) time.Duration { return setupTimeout + s.Duration + Grace(s) + time.Minute }

// startNode starts the engine of node self among peers on s (opened by
// openSock), with wait applied to every send. ctx ends it early.
func startNode(ctx context.Context, spec Spec, self int, peers []Peer, s *sock, mtu int, seed uint64, wait func(context.Context, int) error) *node {
	nd := &node{s: s, wait: wait, drained: make(chan struct{}), done: make(chan struct{})}
	nd.e = newEngine(spec, self, peers, mtu, seed, time.Now())
	var once sync.Once
	nd.e.onDrained = func() { once.Do(func() { close(nd.drained) }) }
	stop := context.AfterFunc(ctx, func() { nd.stop.Store(true) })
	go func() {
		defer close(nd.done)
		defer stop()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		nd.run = nd.loop(ctx)
		once.Do(func() { close(nd.drained) })
	}()
	return nd
}

// Stop ends the loop and waits for its result.
func (nd *node) Stop() *NodeRun {
	nd.stop.Store(true)
	<-nd.done
	return nd.run
}

func (nd *node) loop(ctx context.Context) *NodeRun {
	e, s := nd.e, nd.s
	defer s.close()
	s.takeSlot()
	before, merr := counters.Take()
	var ru0 unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	names := make([]unix.RawSockaddrInet6, e.maxOut)
	sendNames := make([]unix.RawSockaddrInet6, e.maxOut)
	peerNames := make([]unix.RawSockaddrInet6, len(e.peers))
	for i, p := range e.peers {
		peerNames[i] = rawName(p.Addr)
	}
	sendBufs := make([][]byte, e.maxOut)
	e.send = func(outs []outMsg) error {
		bytes := 0
		for i, o := range outs {
			sendBufs[i] = o.buf[:o.n]
			sendNames[i] = peerNames[o.to]
			bytes += o.n
		}
		if err := nd.wait(ctx, bytes); err != nil {
			return err
		}
		return s.write(sendBufs[:len(outs)], sendNames[:len(outs)], nd.stop.Load)
	}
	bufs := make([][]byte, e.maxOut)
	for i := range bufs {
		bufs[i] = make([]byte, e.maxPacket)
	}
	lens := make([]int, len(bufs))
	hard := time.Now().Add(hardStop(e.spec))
	now := time.Now()
	for !nd.stop.Load() && e.err == nil && now.Before(hard) {
		// A fresh clock: handling the last batch took time, and what tick
		// sends (requests, pings) is timed from now.
		now = time.Now()
		e.tick(now)
		e.flush()
		s.deadline = e.deadline(now)
		n, err := s.read(bufs, lens, names)
		now = time.Now()
		if err != nil {
			e.err = err
			break
		}
		// Pings first, their echoes out before the batch's blocks: the
		// ping table measures the path and the hosts, as Oracle's PING
		// process does beside LMS, not this loop's queue.
		for pass := range 2 {
			for i := 0; i < n; i++ {
				switch {
				case lens[i] < 0:
					if pass == 0 {
						e.res.Dropped++ // truncated: larger than anything of the run
					}
				case isPing(bufs[i][:lens[i]]) == (pass == 0):
					e.receive(bufs[i][:lens[i]], nameOf(&names[i]), now)
				}
			}
			e.flush()
		}
	}
	res := e.finish()
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		res.Host = strings.TrimSpace(string(b))
	}
	var ru1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	res.CPU = traffic.CPU{Threads: 1, UserNs: ru1.Utime.Nano() - ru0.Utime.Nano(), SystemNs: ru1.Stime.Nano() - ru0.Stime.Nano()}
	if merr == nil {
		if after, err := counters.Take(); err == nil {
			res.Counters, res.CPU.SoftIRQNs = traffic.DeltaCounters(before, after)
		} else {
			merr = err
		}
	}
	switch {
	case e.err != nil && ctx.Err() == nil:
		res.Error = e.err.Error()
	case merr != nil:
		res.Error = merr.Error()
	case !now.Before(hard):
		res.Error = "stopped at its own deadline: the run was never collected"
	}
	return res
}
