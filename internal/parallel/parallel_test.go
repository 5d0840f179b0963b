package parallel

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunBound: every index is called exactly once, never more than the
// limit at once, and the limit is reached (the calls last long enough for
// the others to pile up); a limit below 1 runs one at a time, and n of 0
// calls nothing.
func TestRunBound(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{100, 16}, {5, 16}, {40, 1}, {3, 0}, {3, -2}, {0, 4}} {
		var now, peak atomic.Int32
		var mu sync.Mutex
		seen := map[int]int{}
		want := int32(min(c.n, max(c.limit, 1)))
		Run(c.n, c.limit, func(i int) {
			cur := now.Add(1)
			defer now.Add(-1)
			for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
			}
			// Stay until the bound's worth of calls has run at once (a
			// sleep let a slow spawner on a loaded machine miss it); the
			// deadline only keeps a Run that never allows that many from
			// hanging the test.
			for deadline := time.Now().Add(10 * time.Second); peak.Load() < want && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			seen[i]++
			mu.Unlock()
		})
		if len(seen) != c.n || peak.Load() != want {
			t.Errorf("n %d limit %d: %d indexes called, at most %d at once, want %d and %d", c.n, c.limit, len(seen), peak.Load(), c.n, want)
		}
		for i, k := range seen {
			if i < 0 || i >= c.n || k != 1 {
				t.Errorf("n %d limit %d: index %d called %d times", c.n, c.limit, i, k)
			}
		}
	}
}

// TestFirst returns the error of the lowest failing index, whichever
// finished first, and nil when none failed.
func TestFirst(t *testing.T) {
	twelve := make(chan struct{})
	err := First(20, 4, func(i int) error {
		switch i {
		case 7:
			select { // finishes after 12
			case <-twelve:
			case <-time.After(10 * time.Second): // only against a hang
				t.Error("call 12 never ran while call 7 waited")
			}
			return fmt.Errorf("call %d", i)
		case 12:
			defer close(twelve)
			return fmt.Errorf("call %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "call 7" {
		t.Errorf("First = %v, want call 7's error", err)
	}
	if err := First(20, 4, func(int) error { return nil }); err != nil {
		t.Errorf("First with no failure = %v", err)
	}
	boom := errors.New("boom")
	if err := First(1, 0, func(int) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("First(1, 0) = %v, want boom", err)
	}
}
