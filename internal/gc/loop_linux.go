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
	"github.com/interlink/interlink/internal/idlestat"
	"github.com/interlink/interlink/internal/traffic"
)

// node runs a node's two engines, each on its own socket and its own
// locked thread: the workload's (requester, master and holder at once, as
// an LMS process is: the node's CPU figures are that thread's) and the
// pings' (as Oracle's PING process beside LMS: a ping is answered by a
// thread that does nothing else, so that the ping table measures the path
// and the hosts, not the block queue nor the workload's wake-ups).
type node struct {
	work, ping *thread // ping is nil when the run has no pings
	drained    chan struct{}
	// before is the node's kernel counters when its threads started
	// (merr why not): the run's counters span both threads, so that the
	// pings' datagrams, which the figures per block take out, are all in.
	before *counters.Snapshot
	merr   error
	// idle is the host's cpuidle statistics when the threads started.
	idle idlestat.Snapshot
	// awake is the node's receive paths awake (nil: the split is off).
	awake *ReceivePaths
}

// thread is one engine's loop.
type thread struct {
	e       *engine
	s       *sock
	wait    func(ctx context.Context, n int) error // the control session's rate limit
	stop    atomic.Bool
	drained chan struct{}
	done    chan struct{}
	run     *NodeRun
}

// hardStop bounds a node that nobody stops: its run's duration, the setup,
// the grace, and time for a slow coordinator to collect.
func hardStop(s Spec) time.Duration { return setupTimeout + s.Duration + Grace(s) + time.Minute }

// startNode starts the engines of node self: the workload among peers on s
// and, unless the run has none, the pings among pingPeers (the same nodes'
// ping endpoints and keys) on ps (both opened by openSock), with wait
// applied to every send. ctx ends them early.
func startNode(ctx context.Context, spec Spec, self int, peers, pingPeers []Peer, s, ps *sock, mtu int, seed uint64, wait func(context.Context, int) error) *node {
	now := time.Now()
	nd := &node{drained: make(chan struct{})}
	if !spec.NoSplit {
		// Before the counters: its datagrams are not the run's.
		nd.awake = measureAwake(spec.Request, max(Chunks(spec.Block)[0], spec.Request, PingLarge, HeaderLen))
	}
	nd.before, nd.merr = counters.Take()
	nd.idle = idlestat.Read("/")
	// Both threads block in the kernel without the runtime's system-call
	// bookkeeping, which would put a hand-over of the thread's P on every
	// wake-up: the workload's in a raw slot when one is free (see
	// traffic.TakeRawSlot), the pings' always, with a P of its own (it
	// sleeps between pings; its round trips are what it measures).
	s.takeSlot()
	work := newEngine(workSpec(spec), self, peers, mtu, seed, now)
	if !spec.NoSplit {
		s.enableStamps()
		work.awake = [2]int64{nd.awake.RequestNs, nd.awake.BlockNs}
	}
	nd.work = startThread(ctx, work, s, wait)
	threads := []*thread{nd.work}
	if spec.NoPing {
		ps.close()
	} else {
		ps.takeSleeperSlot()
		nd.ping = startThread(ctx, newEngine(pingSpec(spec), self, pingPeers, mtu, seed^0x9e3779b97f4a7c15, now), ps, wait)
		threads = append(threads, nd.ping)
	}
	go func() {
		for _, th := range threads {
			<-th.drained
		}
		close(nd.drained)
	}()
	return nd
}

func startThread(ctx context.Context, e *engine, s *sock, wait func(context.Context, int) error) *thread {
	th := &thread{e: e, s: s, wait: wait, drained: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	e.onDrained = func() { once.Do(func() { close(th.drained) }) }
	stop := context.AfterFunc(ctx, func() { th.stop.Store(true) })
	go func() {
		defer close(th.done)
		defer stop()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		th.run = th.loop(ctx)
		once.Do(func() { close(th.drained) })
	}()
	return th
}

// Stop ends the loops and waits for the node's result: the workload's,
// with the ping table of the pings' engine.
func (nd *node) Stop() *NodeRun {
	for _, th := range []*thread{nd.work, nd.ping} {
		if th != nil {
			th.stop.Store(true)
		}
	}
	<-nd.work.done
	res := nd.work.run
	if nd.ping != nil {
		<-nd.ping.done
		pr := nd.ping.run
		res.Pings = pr.Pings
		res.Dropped += pr.Dropped
		res.Truncated += pr.Truncated
		// The host's counters hold the pings' packets too: the figures
		// per block take them out with the workload's other datagrams.
		res.OtherPackets += pr.OtherPackets
		if res.Error == "" && pr.Error != "" {
			res.Error = "pings: " + pr.Error
		}
	}
	for _, e := range nd.engines() {
		res.DatagramsOut += e.pktsOut
	}
	res.Idle = idlestat.Read("/").Since(nd.idle)
	res.ReceivePath = nd.awake
	if nd.merr == nil {
		if after, err := counters.Take(); err == nil {
			res.Counters, res.CPU.SoftIRQNs = traffic.DeltaCounters(nd.before, after)
			res.Netns = traffic.NetnsID() // the agent's: it never switches
		} else {
			nd.merr = err
		}
	}
	if nd.merr != nil && res.Error == "" {
		res.Error = nd.merr.Error()
	}
	return res
}

// engines are the node's engines, for the session's log.
func (nd *node) engines() []*engine {
	if nd.ping == nil {
		return []*engine{nd.work.e}
	}
	return []*engine{nd.work.e, nd.ping.e}
}

func (th *thread) loop(ctx context.Context) *NodeRun {
	e, s := th.e, th.s
	defer s.close()
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
		if err := th.wait(ctx, bytes); err != nil {
			return err
		}
		return s.write(sendBufs[:len(outs)], sendNames[:len(outs)], th.stop.Load)
	}
	bufs := make([][]byte, e.maxOut)
	for i := range bufs {
		bufs[i] = make([]byte, e.maxPacket)
	}
	lens := make([]int, len(bufs))
	hard := time.Now().Add(hardStop(e.spec))
	now := time.Now()
	for !th.stop.Load() && e.err == nil && now.Before(hard) {
		// A fresh clock: handling the last batch took time, and what tick
		// sends (requests, pings) is timed from now.
		now = time.Now()
		e.tick(now)
		e.flush()
		s.deadline = e.deadline(now)
		n, err := s.read(bufs, lens, names)
		now = time.Now()
		e.readAt = now.UnixNano()
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
						e.res.Truncated++ // larger than anything of the run
					}
				case isPing(bufs[i][:lens[i]]) == (pass == 0):
					e.rx = s.stamp(i)
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
	switch {
	case e.err != nil && ctx.Err() == nil:
		res.Error = e.err.Error()
	case !now.Before(hard):
		res.Error = "stopped at its own deadline: the run was never collected"
	}
	return res
}

// measureAwake measures the node's receive paths awake for requests of
// request bytes and blocks' datagrams of block bytes.
func measureAwake(request, block int) *ReceivePaths {
	rp := &ReceivePaths{}
	for _, m := range []struct {
		size int
		ns   *int64
	}{{request, &rp.RequestNs}, {block, &rp.BlockNs}} {
		d, err := traffic.ReceivePathAwake(m.size)
		if err != nil {
			return &ReceivePaths{Err: err.Error()}
		}
		*m.ns = d.Nanoseconds()
	}
	return rp
}
