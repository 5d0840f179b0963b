package watch

import (
	"context"
	"testing"
	"time"
)

// probeTime shares the round's time left among the probes still to run
// and gives up below a blocks interval.
func TestProbeTime(t *testing.T) {
	if d := probeTime(context.Background(), 500*time.Millisecond, 3); d != 500*time.Millisecond {
		t.Errorf("no deadline: %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	// Two thirds of the time left, shared by 3: bracketed by the time left
	// before and after the call (a stall between them only lowers both).
	dl, _ := ctx.Deadline()
	before := time.Until(dl)
	d := probeTime(ctx, 500*time.Millisecond, 3)
	after := time.Until(dl)
	if lo, hi := after*2/3/3, before*2/3/3; (d < lo || d > hi) && !(d == 0 && lo < 100*time.Millisecond) {
		t.Errorf("%v..%v left for 3 probes: %v, want two thirds of it shared by 3 (%v..%v)", after, before, d, lo, hi)
	}
	if d := probeTime(ctx, 500*time.Millisecond, 10); d != 0 {
		t.Errorf("900ms left for 10 probes: %v, want 0 (below 100ms each)", d)
	}
	cancel()
	if d := probeTime(ctx, 500*time.Millisecond, 1); d != 0 {
		t.Errorf("round over: %v", d)
	}
}
