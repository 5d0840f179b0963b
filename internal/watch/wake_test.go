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
	if d := probeTime(ctx, 500*time.Millisecond, 3); d < 150*time.Millisecond || d > 200*time.Millisecond {
		t.Errorf("900ms left for 3 probes: %v, want about 200ms", d)
	}
	if d := probeTime(ctx, 500*time.Millisecond, 10); d != 0 {
		t.Errorf("900ms left for 10 probes: %v, want 0 (below 100ms each)", d)
	}
	cancel()
	if d := probeTime(ctx, 500*time.Millisecond, 1); d != 0 {
		t.Errorf("round over: %v", d)
	}
}
