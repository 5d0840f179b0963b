package traffic

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

func loPair(t *testing.T) (a, b *net.UDPConn) {
	t.Helper()
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b, err = net.DialUDP("udp", nil, a.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A rawConn reads a batch with its control messages, honours its read
// deadline to the millisecond rather than sysTimeout, and has taken the
// conn over (closed it).
func TestRawConn(t *testing.T) {
	if cap(rawSlots) == 0 {
		t.Skip("GOMAXPROCS 1: no raw loops")
	}
	rx, tx := loPair(t)
	if err := blockingIO(rx); err != nil {
		t.Fatal(err)
	}
	if err := enableRxTimestamps(rx); err != nil {
		t.Fatal(err)
	}
	bc, release := acquireRaw(rx)
	defer release()
	rc, ok := bc.(*rawConn)
	if !ok {
		t.Fatalf("acquireRaw gave %T with a free slot", bc)
	}
	if _, err := rx.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the conn is still open after acquireRaw (write: %v)", err)
	}
	for _, s := range []string{"one", "two!", "three"} {
		if _, err := tx.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	ms := make([]ipv4.Message, 8)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, 64)}
		ms[i].OOB = make([]byte, oobLen)
	}
	got := 0
	for deadline := time.Now().Add(2 * time.Second); got < 3 && time.Now().Before(deadline); {
		n, err := rc.ReadBatch(ms[got:], unix.MSG_WAITFORONE)
		if err != nil && !isTimeout(err) {
			t.Fatal(err)
		}
		for i := got; i < got+n; i++ {
			if _, ok := rxStamp(ms[i].OOB[:ms[i].NN]); !ok {
				t.Errorf("datagram %d: no kernel receive time in its %d control bytes", i, ms[i].NN)
			}
		}
		got += n
	}
	if got != 3 || string(ms[0].Buffers[0][:ms[0].N]) != "one" || string(ms[2].Buffers[0][:ms[2].N]) != "three" {
		t.Fatalf("read %d datagrams: %q %q", got, ms[0].Buffers[0][:ms[0].N], ms[2].Buffers[0][:ms[2].N])
	}
	rc.SetReadDeadline(time.Now().Add(-time.Millisecond))
	if _, err := rc.ReadBatch(ms, 0); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("past deadline: %v", err)
	}
	start := time.Now()
	rc.SetReadDeadline(start.Add(5 * time.Millisecond))
	for {
		_, err := rc.ReadBatch(ms, 0)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if !isTimeout(err) {
			t.Fatalf("idle read: %v", err)
		}
	}
	// sysTimeout is 20 ms: a 5 ms deadline must not wait for it. What
	// the read armed says what it waited for (a delay on a loaded machine
	// says nothing about it): at most the 5 ms, which the kernel keeps in
	// ticks (5 ms reads back as 8 at HZ=250), under sysTimeout.
	tv, err := unix.GetsockoptTimeval(rc.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(tv.Nano()); rc.timeout <= 0 || rc.timeout > 5*time.Millisecond || d <= 0 || d >= sysTimeout {
		t.Errorf("a 5 ms deadline armed SO_RCVTIMEO at %v (the kernel has %v), want at most 5ms (sysTimeout is %v)", rc.timeout, d, sysTimeout)
	}
}

// With every raw slot taken, acquireRaw falls back to the netpoller and
// leaves the conn open.
func TestRawSlotsExhausted(t *testing.T) {
	var held []func()
	defer func() {
		for _, r := range held {
			r()
		}
	}()
	for i := 0; i < cap(rawSlots); i++ {
		a, _ := loPair(t)
		bc, r := acquireRaw(a)
		if _, ok := bc.(*rawConn); !ok {
			t.Fatalf("slot %d of %d: got %T", i, cap(rawSlots), bc)
		}
		held = append(held, r)
	}
	a, b := loPair(t)
	bc, r := acquireRaw(a)
	defer r()
	if _, ok := bc.(*pollConn); !ok {
		t.Fatalf("no free slot, got %T", bc)
	}
	if _, err := b.Write([]byte("still open")); err != nil {
		t.Fatal(err)
	}
	a.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := a.Read(make([]byte, 32)); err != nil {
		t.Errorf("fallback conn closed: %v", err)
	}
}

// A raw loop holds its P while it sleeps in the kernel: garbage
// collections and the rest of the process must still go on (the runtime's
// preemption signal ends the read with EINTR). The blocks run goes on
// until 20 collections, started once the requester's loop runs (its first
// interval closed), are done; a hang is the 45 s timeout.
func TestRawLoopLetsProcessRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 20 collections timed beside a raw loop, serial, 0.8 s")
	}
	if cap(rawSlots) == 0 {
		t.Skip("GOMAXPROCS 1: no raw loops")
	}
	const want = 20
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second) // a hang, short of the run's minute
	defer cancel()
	var gcs int
	var worst time.Duration
	running := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		select {
		case <-running:
		case <-ctx.Done():
			return
		}
		for ; gcs < want && ctx.Err() == nil; gcs++ {
			t0 := time.Now()
			runtime.GC()
			worst = max(worst, time.Since(t0))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	spec := Spec{Mode: ModeBlocks, Duration: time.Minute, Interval: 100 * time.Millisecond, Block: 8 << 10, Outstanding: 1}
	res, err := RunLocal(ctx, spec, lo, lo, func(_ Direction, r Role, _ Interval) {
		if r == RoleRequester {
			once.Do(func() { close(running) })
		}
	})
	cancel() // a run that ended by itself stops the collections
	<-done
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[0]
	t.Logf("%d collections during a blocks run, the slowest %v; %d blocks, client %q", gcs, worst, f.Summary.Messages, f.Client.Error)
	// A hang, not a figure: on this 2-core machine under load the slowest
	// collection took up to 140 ms with a raw loop and 60 ms without one
	// (both ends of the run share the two CPUs with the collector); an
	// idle raw loop delays a collection by 1 to 4 ms (EINTR).
	if gcs < want {
		t.Errorf("%d collections, the slowest %v: the raw loops held the runtime up", gcs, worst)
	}
	if f.Summary.Messages == 0 || f.Client.Error != "cancelled" {
		t.Errorf("%d blocks completed, client error %q (want cancelled once the collections were done)", f.Summary.Messages, f.Client.Error)
	}
}
