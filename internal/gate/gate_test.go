package gate

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/interlink/interlink/internal/casetest"
)

// upstream is an echo server on loopback that records when it accepted
// each connection and the first bytes each sent.
type upstream struct {
	ln    net.Listener
	mu    sync.Mutex
	times []time.Time
	first []string
}

func newUpstream(t *testing.T) *upstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.times = append(u.times, time.Now())
			u.mu.Unlock()
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				n, err := c.Read(buf)
				u.mu.Lock()
				u.first = append(u.first, string(buf[:n]))
				u.mu.Unlock()
				if err != nil {
					return
				}
				c.Write(buf[:n])
				io.Copy(c, c)
			}()
		}
	}()
	return u
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.times)
}

// engines are the two ways a route accepts and proxies: the event loop
// (Linux; elsewhere it is the other) and a goroutine pair per connection
// (other systems, an upstream given by name, and on every system the
// connections that waited in the queue).
var engines = []string{"loop", "goroutines"}

// eachEngine runs f once with each engine.
func eachEngine(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range engines {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

// eachEngineParallel runs f with each engine at once, in parallel with
// the package's other parallel tests: for tests that spend their time
// waiting on the gate's timers or on a slow reader (each has its own gate,
// upstream and metrics), never for one that measures a rate or a delay.
func eachEngineParallel(t *testing.T, f func(t *testing.T, engine string)) {
	t.Parallel()
	casetest.AtOnce(t, len(engines), func(i int) string { return engines[i] }, func(t *testing.T, i int) { f(t, engines[i]) })
}

func startGate(t *testing.T, engine string, r Route) (*Gate, string) {
	t.Helper()
	r.Listen = "127.0.0.1:0"
	r.Name = "db"
	g, err := New([]Route{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.routes["db"].goroutines = engine == "goroutines"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("gate did not stop")
		}
	})
	return g, g.Addr("db").String()
}

// dialFrom connects to addr from a given loopback source address.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roundTrip(t *testing.T, c net.Conn, msg string) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	return string(buf)
}

func TestProxyAndRate(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 50, Burst: 1}})
		const n = 20
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; i < n; i++ {
			c := dialFrom(t, "127.0.0.1", addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := roundTrip(t, c, "startup"); got != "startup" {
					t.Errorf("echo %q", got)
				}
			}()
		}
		wg.Wait()
		// 20 admissions at 50/s with a burst of 1 take at least 19/50 s.
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("20 admissions at 50/s in %s", d)
		}
		// Never faster than the rate between arrivals either (a stall on a
		// loaded machine only makes it slower, so there is no lower bound).
		u.mu.Lock()
		span := u.times[n-1].Sub(u.times[0])
		u.mu.Unlock()
		if rate := float64(n-1) / span.Seconds(); rate > 60 {
			t.Errorf("upstream arrival rate %.1f/s, want at most 50", rate)
		}
		if v := testutil.ToFloat64(g.m.admitted.WithLabelValues("db")); v != n {
			t.Errorf("admitted %v", v)
		}
	})
}

func TestFairAcrossSources(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 20, Burst: 1}})
		var heavy []net.Conn
		for i := 0; i < 12; i++ {
			c := dialFrom(t, "127.0.0.2", addr)
			c.Write([]byte("heavy"))
			heavy = append(heavy, c)
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.accepted.WithLabelValues("db")) == 12 })
		light := dialFrom(t, "127.0.0.3", addr)
		light.Write([]byte("light"))
		// Counted from when the gate has the light source's connection (on
		// a loaded machine the dial alone can take a few admissions).
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.accepted.WithLabelValues("db")) == 13 })
		before := u.count()
		// The light source's one connection is served within a few
		// admissions (one in progress, the heavy source's turn, its own),
		// not after the heavy source's twelve.
		light.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 5)
		if _, err := io.ReadFull(light, buf); err != nil {
			t.Fatal(err)
		}
		u.mu.Lock()
		pos := -1
		for i, f := range u.first {
			if f == "light" {
				pos = i
			}
		}
		u.mu.Unlock()
		if pos < 0 || pos > before+2 {
			t.Errorf("the light source was admitted as number %d of %d, %d admitted before the gate had it", pos+1, u.count(), before)
		}
		_ = heavy
	})
}

func TestAbandonedNeverDialled(t *testing.T) {
	eachEngineParallel(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 0.5, Burst: 1}})
		first := dialFrom(t, "127.0.0.1", addr) // takes the one token; the next is 2 s away
		roundTrip(t, first, "x")
		gone := dialFrom(t, "127.0.0.1", addr)
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.queued.WithLabelValues("db")) == 1 })
		gone.Close() // gives up while queued
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.abandoned.WithLabelValues("db")) == 1 })
		// The next token goes to the next client queued after it: when
		// that one is through, the upstream has seen two connections, not
		// three.
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "y")
		if n := u.count(); n != 2 {
			t.Errorf("upstream saw %d connections, want 2: an abandoned client was dialled", n)
		}
	})
}

func TestQueueTimeoutClosesBeforeServerByte(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 0.5, Burst: 1, QueueTimeout: 200 * time.Millisecond}})
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x")
		c := dialFrom(t, "127.0.0.1", addr)
		// The next token is 2 s away; the close before it is the queue
		// timeout's (counted below), with no byte from the server.
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Read(make([]byte, 10))
		if n != 0 || err != io.EOF {
			t.Errorf("read %d bytes, %v; want EOF with no byte", n, err)
		}
		if v := testutil.ToFloat64(g.m.timeouts.WithLabelValues("db")); v != 1 || u.count() != 1 {
			t.Errorf("timeouts %v, upstream connections %d", v, u.count())
		}
	})
}

func TestFullQueueStopsAccepting(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 0.2, Burst: 1, Queue: 2, PerSource: 2}})
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x")
		for i := 0; i < 4; i++ {
			dialFrom(t, "127.0.0.1", addr) // the kernel completes these; the gate takes two
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.fullEpisodes.WithLabelValues("db")) >= 1 })
		if v := testutil.ToFloat64(g.m.accepted.WithLabelValues("db")); v != 3 {
			t.Errorf("accepted %v with a queue of 2, want 3 (one admitted, two queued)", v)
		}
	})
}

func TestPerSourceCap(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 0.2, Burst: 1, Queue: 10, PerSource: 2}})
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x")
		for i := 0; i < 3; i++ {
			dialFrom(t, "127.0.0.1", addr)
		}
		waitFor(t, func() bool {
			return testutil.ToFloat64(g.m.rejected.WithLabelValues("db", "source_queue_full")) == 1
		})
		dialFrom(t, "127.0.0.4", addr) // another source still gets in
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.queued.WithLabelValues("db")) == 3 })
	})
}

func TestReloadKeepsQueued(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 0.1, Burst: 1}})
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x")
		queued := dialFrom(t, "127.0.0.1", addr)
		queued.Write([]byte("waiting"))
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.queued.WithLabelValues("db")) == 1 })
		if err := g.Reload([]Route{{Name: "db", Listen: "127.0.0.1:1", Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 100, Burst: 1}}}); err == nil {
			t.Error("a reload that changes the listen address was accepted")
		}
		r := Route{Name: "db", Listen: g.routes["db"].cfg.Listen, Upstream: u.ln.Addr().String(), Limits: Limits{RatePerSec: 100, Burst: 1}}
		if err := g.Reload([]Route{r}); err != nil {
			t.Fatal(err)
		}
		queued.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 7)
		if _, err := io.ReadFull(queued, buf); err != nil || string(buf) != "waiting" {
			t.Errorf("queued client after reload: %q, %v", buf, err)
		}
	})
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		r    Route
		want string
	}{
		{Route{Listen: ":1"}, "route :1: upstream is required"},
		{Route{Upstream: "x:1"}, "route without a name: listen is required"},
		{Route{Listen: ":1", Upstream: "x", Limits: Limits{RatePerSec: 5, Burst: 1}}, `upstream "x": want HOST:PORT`},
		{Route{Listen: ":1", Upstream: ":1", Limits: Limits{RatePerSec: 5, Burst: 1}}, "no host"},
		{Route{Listen: ":1", Upstream: "x:65536", Limits: Limits{RatePerSec: 5, Burst: 1}}, `port "65536"`},
		{Route{Listen: ":1", Upstream: "x:1", Limits: Limits{Burst: 1}}, "rate 0"},
		{Route{Listen: ":1", Upstream: "x:1", Limits: Limits{RatePerSec: 5}}, "burst 0"},
		{Route{Listen: ":1", Upstream: "x:1", Limits: Limits{RatePerSec: 5, Burst: 1, Queue: 5, PerSource: 6}}, "per-source queue 6"},
		{Route{Listen: ":1", Upstream: "x:1", Limits: Limits{RatePerSec: 5, Burst: 1, MaxInflight: -1}}, "max in-flight -1"},
	} {
		if err := tc.r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only against a hang
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBucketKeepsRateWhenWokenLate(t *testing.T) {
	now := time.Unix(0, 0)
	b := newBucket(100, 1, now)
	n := 0
	// A consumer that always wakes 3 ms late for a 10 ms token still gets
	// 100 tokens a second over time, never two at once.
	for i := 0; i < 1000; i++ {
		ok, wait := b.take(now)
		if ok {
			n++
			if again, _ := b.take(now); again {
				t.Fatal("two tokens at once with a burst of 1")
			}
			continue
		}
		now = now.Add(wait + 3*time.Millisecond)
	}
	elapsed := now.Sub(time.Unix(0, 0)).Seconds()
	if rate := float64(n-1) / elapsed; rate < 95 || rate > 101 {
		t.Errorf("rate %.1f/s with late wake-ups, want 100", rate)
	}
}
