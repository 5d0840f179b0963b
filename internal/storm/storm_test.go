package storm

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/gate"
)

// echo serves on loopback: it answers each client's line and records when
// each connection arrived.
func echo(t *testing.T) (addr string, arrivals func() []time.Time) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var at []time.Time
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				n, _ := c.Read(buf)
				c.Write(buf[:n])
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String(), func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), at...)
	}
}

func TestStormDirect(t *testing.T) {
	addr, _ := echo(t)
	srcs, _ := SourceRange("127.0.0.10", 5)
	r, err := Run(context.Background(), Spec{Target: addr, Clients: 200, Sources: srcs, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.LoggedOn != 200 || r.Failed != 0 || r.Logon.N != 200 || r.Sources != 5 {
		t.Fatalf("logged on %d failed %d errors %v", r.LoggedOn, r.Failed, r.Errors)
	}
	if !(r.Connect.P50 <= r.Logon.P50 && r.Logon.P50 <= r.Logon.P99 && r.Logon.P99 <= r.Logon.Max) {
		t.Errorf("percentiles out of order: connect %+v logon %+v", r.Connect, r.Logon)
	}
	seen := map[string]int{}
	for _, c := range r.Clients {
		seen[c.Source]++
	}
	if len(seen) != 5 || seen["127.0.0.14"] != 40 {
		t.Errorf("clients per source %v", seen)
	}
	total := 0
	for _, s := range r.Timeline {
		total += s.LoggedOn + s.Failed
	}
	if total != 200 {
		t.Errorf("timeline holds %d clients", total)
	}
}

func TestStormErrorsByKind(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens: refused
	r, _ := Run(context.Background(), Spec{Target: addr, Clients: 10, Timeout: 5 * time.Second})
	if r.Failed != 10 || r.Errors[KindRefused] != 10 {
		t.Errorf("errors %v", r.Errors)
	}
	// A server that closes at once: closed before logon.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln2.Close()
	go func() {
		for {
			c, err := ln2.Accept()
			if err != nil {
				return
			}
			c.(*net.TCPConn).CloseWrite()
			time.Sleep(50 * time.Millisecond)
			c.Close()
		}
	}()
	r, _ = Run(context.Background(), Spec{Target: ln2.Addr().String(), Clients: 3, Timeout: 5 * time.Second})
	if r.Errors[KindClosed] != 3 {
		t.Errorf("errors %v", r.Errors)
	}
	// A server that never answers: timeout.
	ln3, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln3.Close()
	r, _ = Run(context.Background(), Spec{Target: ln3.Addr().String(), Clients: 3, Timeout: 300 * time.Millisecond})
	if r.Errors[KindTimeout] != 3 {
		t.Errorf("errors %v", r.Errors)
	}
}

// TestStormThroughGate: the gate absorbs a storm from 10 sources at its
// rate, with no client error, upstream arrivals at the gate's rate and a
// fair share for every source.
func TestStormThroughGate(t *testing.T) {
	up, arrivals := echo(t)
	const rate = 300.0
	g, err := gate.New([]gate.Route{{Name: "db", Listen: "127.0.0.1:0", Upstream: up,
		Limits: gate.Limits{RatePerSec: rate, Burst: 1, Queue: 1000, PerSource: 100}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	srcs, _ := SourceRange("127.0.1.1", 10)
	r, err := Run(context.Background(), Spec{Target: g.Addr("db").String(), Clients: 300, Sources: srcs, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 0 {
		t.Fatalf("%d clients failed through the gate: %v", r.Failed, r.Errors)
	}
	at := arrivals()
	span := at[len(at)-1].Sub(at[0]).Seconds()
	// Never faster than the rate (10 % for the first and last arrival's
	// timing); slower only by a lot: a stall on a loaded machine costs a
	// burst-1 bucket its tokens, so the lower bound only catches a stuck
	// gate.
	if got := float64(len(at)-1) / span; got < rate/2 || got > rate*1.1 {
		t.Errorf("upstream arrival rate %.1f/s, want at most %.0f (and more than half of it)", got, rate)
	}
	if r.Fairness == nil || *r.Fairness < 0.9 {
		t.Errorf("fairness %v, want >= 0.9", r.Fairness)
	}
	// The last client waited about its position over the rate.
	if want := (300 - 1) * int64(time.Second) / int64(rate); r.Logon.Max < want*8/10 || r.Logon.Max > want*3 {
		t.Errorf("last logon after %s, want about %s", time.Duration(r.Logon.Max), time.Duration(want))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Clients: 1}, "no target"},
		{Spec{Target: "x:1"}, "--clients 0"},
		{Spec{Target: "x:1", Clients: 1, Protocol: "http"}, `--protocol "http"`},
		{Spec{Target: "x:1", Clients: 1, Protocol: MySQL}, "--protocol mysql needs --user"},
		{Spec{Target: "x:1", Clients: 1, Protocol: Postgres}, "needs --user"},
		{Spec{Target: "x:1", Clients: 1, Sources: []string{"nope"}}, `source "nope"`},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
	if _, err := SourceRange("255.255.255.254", 5); err == nil {
		t.Error("a range past the address space was accepted")
	}
}
