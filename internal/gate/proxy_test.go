package gate

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serve runs handle for every connection to a loopback listener.
func serve(t *testing.T, handle func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c.(*net.TCPConn))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestHalfClose: an admitted client that has sent everything shuts its
// side down and still gets the whole answer, which the upstream sends only
// after it read the end of the request. (A client that does so while
// queued cannot be told from one that left: it is dropped as abandoned.)
func TestHalfClose(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		up := serve(t, func(c *net.TCPConn) {
			req, err := io.ReadAll(c)
			if err != nil {
				return
			}
			c.Write(bytes.ToUpper(req))
		})
		_, addr := startGate(t, engine, Route{Upstream: up, Limits: Limits{RatePerSec: 1e6, Burst: 1000}})
		for i := 0; i < 20; i++ {
			c := dialFrom(t, "127.0.0.1", addr)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write([]byte("select 1 from dual")); err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || string(got) != "SELECT 1 FROM DUAL" {
				t.Fatalf("connection %d: %q, %v", i, got, err)
			}
			c.Close()
		}
	})
}

// TestStreamsBothWays: megabytes each way at once, the client reading
// slowly for a while so that the gate has to hold and resume, arrive
// whole and in order.
func TestStreamsBothWays(t *testing.T) {
	eachEngineParallel(t, func(t *testing.T, engine string) {
		const size = 8 << 20
		data := make([]byte, size)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := sha256.Sum256(data)
		got := make(chan [32]byte, 1)
		up := serve(t, func(c *net.TCPConn) {
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				c.Write(data)
				c.CloseWrite()
			}()
			h := sha256.New()
			io.Copy(h, c)
			var sum [32]byte
			copy(sum[:], h.Sum(nil))
			got <- sum
			<-wrote // the connection closes when this returns
		})
		_, addr := startGate(t, engine, Route{Upstream: up, Limits: Limits{RatePerSec: 1000, Burst: 10}})
		for round := 0; round < 2; round++ {
			c := dialFrom(t, "127.0.0.1", addr)
			c.SetDeadline(time.Now().Add(30 * time.Second))
			go func() {
				c.Write(data)
				c.(*net.TCPConn).CloseWrite()
			}()
			h := sha256.New()
			buf := make([]byte, 4096)
			for i := 0; i < 50; i++ { // slowly at first: the gate's side fills up
				n, err := c.Read(buf)
				h.Write(buf[:n])
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			if _, err := io.Copy(h, c); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h.Sum(nil), want[:]) {
				t.Errorf("round %d: the client received other bytes than the upstream sent", round)
			}
			select {
			case sum := <-got:
				if sum != want {
					t.Errorf("round %d: the upstream received other bytes than the client sent", round)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: the upstream never saw the end of the client's stream", round)
			}
			c.Close()
		}
	})
}

// TestServerSpeaksFirst: with one handshake in flight at most, the second
// client is dialled only after the upstream's first byte to the first
// (a greeting, as MySQL sends), and each client gets its greeting without
// having sent anything.
func TestServerSpeaksFirst(t *testing.T) {
	eachEngineParallel(t, func(t *testing.T, engine string) {
		var mu sync.Mutex
		var events []string                       // "accept" and "greet", in the order the upstream saw them
		const greetAfter = 300 * time.Millisecond // the gate's chance to dial the second too early
		up := serve(t, func(c *net.TCPConn) {
			mu.Lock()
			events = append(events, "accept")
			mu.Unlock()
			time.Sleep(greetAfter)
			mu.Lock()
			events = append(events, "greet")
			mu.Unlock()
			c.Write([]byte("hello"))
			io.Copy(io.Discard, c)
		})
		g, addr := startGate(t, engine, Route{Upstream: up, Limits: Limits{RatePerSec: 1000, Burst: 10, MaxInflight: 1}})
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			c := dialFrom(t, "127.0.0.1", addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				buf := make([]byte, 5)
				if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
					t.Errorf("greeting %q, %v", buf, err)
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(events, " "); got != "accept greet accept greet" {
			t.Errorf("the upstream saw %q, want \"accept greet accept greet\": the handshake bound did not hold", got)
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.inflight.WithLabelValues("db")) == 0 })
	})
}

// TestUpstreamRefused: a client whose upstream refuses the connection is
// closed, counted, and its handshake slot comes back.
func TestUpstreamRefused(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		up := ln.Addr().String()
		ln.Close() // nothing listens there now
		g, addr := startGate(t, engine, Route{Upstream: up, Limits: Limits{RatePerSec: 1000, Burst: 10, MaxInflight: 1}})
		for i := 0; i < 3; i++ {
			c := dialFrom(t, "127.0.0.1", addr)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Fatalf("read %d bytes, %v; want the connection closed", n, err)
			}
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.upstreamErrors.WithLabelValues("db")) == 3 })
		if v := testutil.ToFloat64(g.m.inflight.WithLabelValues("db")); v != 0 {
			t.Errorf("%v handshakes in flight after refused dials", v)
		}
	})
}

// TestFullQueueResumes: once the queue has room again (its waiters timed
// out), the gate accepts again, and what the kernel's backlog held in the
// meantime gets its turn.
func TestFullQueueResumes(t *testing.T) {
	eachEngineParallel(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(),
			Limits: Limits{RatePerSec: 0.5, Burst: 1, Queue: 2, PerSource: 2, QueueTimeout: 300 * time.Millisecond}})
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x") // the one token
		for i := 0; i < 4; i++ {
			dialFrom(t, "127.0.0.1", addr)
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.fullEpisodes.WithLabelValues("db")) >= 1 })
		// The two queued time out, the two in the backlog are accepted and
		// time out in turn.
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.accepted.WithLabelValues("db")) == 5 })
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.timeouts.WithLabelValues("db")) == 4 })
		if v := testutil.ToFloat64(g.m.queued.WithLabelValues("db")); v != 0 {
			t.Errorf("%v still queued", v)
		}
	})
}
