package agent

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

func TestAutoRate(t *testing.T) {
	// Loopback has no line rate: the floor, said so.
	r, basis := AutoRate(netip.MustParseAddr("127.0.0.1"))
	if r != RateFloorBitsPerSec || !strings.Contains(basis, "lo has no line rate") {
		t.Errorf("loopback: %g bit/s (%s)", r, basis)
	}
	// An address no interface holds: the floor too.
	if r, basis := AutoRate(netip.MustParseAddr("192.0.2.77")); r != RateFloorBitsPerSec || !strings.Contains(basis, "unknown") {
		t.Errorf("unknown address: %g bit/s (%s)", r, basis)
	}
}

func TestSessionAutoRateAndHeld(t *testing.T) {
	// A default agent grants each session its auto rate and says so in the
	// welcome; a configured one grants what it was told.
	addr, _ := startAgent(t, wire.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, testToken, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Limits.MaxRateBitsPerSec != RateFloorBitsPerSec {
		t.Errorf("default agent on loopback granted %g bit/s, want the floor %g", c.Limits.MaxRateBitsPerSec, float64(RateFloorBitsPerSec))
	}
	addr, _ = startAgent(t, wire.Limits{MaxRateBitsPerSec: 5e6})
	c2, err := Dial(ctx, addr, testToken, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.Limits.MaxRateBitsPerSec != 5e6 {
		t.Errorf("configured agent granted %g bit/s, want 5e6", c2.Limits.MaxRateBitsPerSec)
	}

	// The bucket records what it held back: nothing within the burst, the
	// sleeps beyond it, and refusals.
	b := newBucket(1e6) // 1 MB/s, burst 64 KiB
	if err := b.wait(ctx, ctx, 32<<10); err != nil || b.waited != 0 {
		t.Fatalf("within the burst: waited %v, %v", b.waited, err)
	}
	// 250 KiB beyond the burst at 1 MB/s: 256 ms, less what the bucket
	// refilled since the first call (a stall there shortens it, so the
	// bound is one-sided).
	if err := b.wait(ctx, ctx, 282<<10); err != nil || b.waited <= 0 || b.waited > 256*time.Millisecond+time.Millisecond {
		t.Errorf("250 KiB beyond the burst at 1 MB/s: waited %v, %v; want at most 256ms", b.waited, err)
	}
	if b.allow(1<<20) || b.refused != 1 {
		t.Errorf("1 MiB at once: refused %d", b.refused)
	}
}

// The automatic limit is looked up once per local address and reused
// while fresh: the same answer as AutoRate, then looked up again.
func TestRateCache(t *testing.T) {
	var c rateCache
	a := netip.MustParseAddr("127.0.0.1")
	t0 := time.Now()
	want, wantBasis := AutoRate(a)
	if r, basis := c.get(a, t0); r != want || basis != wantBasis {
		t.Fatalf("first: %v %q, want %v %q", r, basis, want, wantBasis)
	}
	c.m[a] = cachedRate{1, "cached", t0}
	if r, basis := c.get(a, t0.Add(rateCacheFor-time.Millisecond)); r != 1 || basis != "cached" {
		t.Fatalf("fresh entry not used: %v %q", r, basis)
	}
	if r, _ := c.get(a, t0.Add(rateCacheFor)); r != want {
		t.Fatalf("stale entry used: %v", r)
	}
	c.m[a] = cachedRate{1, "cached", t0}
	if r, _ := c.get(a, t0.Add(-time.Second)); r != want {
		t.Fatalf("entry from the future (clock stepped back) used: %v", r)
	}
}
