package db

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOpenAllBound: every client is opened, never more than the limit at
// once (and the limit is reached), and the error of the lowest failing
// client is the one returned.
func TestOpenAllBound(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{100, 16}, {5, 16}, {40, 1}, {3, 0}} {
		var now, peak atomic.Int32
		var mu sync.Mutex
		seen := map[int]bool{}
		err := openAll(c.n, c.limit, func(i int) error {
			cur := now.Add(1)
			defer now.Add(-1)
			for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond) // long enough for the others to pile up
			mu.Lock()
			seen[i] = true
			mu.Unlock()
			return nil
		})
		want := int32(min(c.n, max(c.limit, 1)))
		if err != nil || len(seen) != c.n || peak.Load() != want {
			t.Errorf("n %d limit %d: %v, %d opened, at most %d at once, want %d", c.n, c.limit, err, len(seen), peak.Load(), want)
		}
	}
	boom := errors.New("refused")
	err := openAll(20, 4, func(i int) error {
		if i == 7 || i == 12 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "client 8 of 20: ") {
		t.Errorf("%v, want client 8's", err)
	}
}
