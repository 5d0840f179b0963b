package kernel

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestProbeOnce: Probe runs the probes once however often and from however
// many goroutines it is called; each caller gets its own copy; SetProbe
// makes the next Probe ask a fake, and its restore brings back the answer
// before it.
func TestProbeOnce(t *testing.T) {
	before := Probe()
	var calls atomic.Int32
	restore := SetProbe(func() map[string]bool {
		calls.Add(1)
		return map[string]bool{"udp-gso": false, "thread-self": true}
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := Probe(); got["udp-gso"] || !got["thread-self"] || len(got) != 2 {
				t.Errorf("fake probes gave %v", got)
			}
		})
	}
	wg.Wait()
	got := Probe()
	got["udp-gso"] = true // the caller's copy
	if again := Probe(); again["udp-gso"] || calls.Load() != 1 {
		t.Errorf("after 10 calls: %d probe runs, answer %v", calls.Load(), again)
	}
	restore()
	if after := Probe(); len(after) != len(before) || after["udp-gso"] != before["udp-gso"] || calls.Load() != 1 {
		t.Errorf("restored: %v, want %v (%d fake runs)", after, before, calls.Load())
	}

	// SetProbe(nil) asks the kernel afresh, once.
	restore = SetProbe(nil)
	defer restore()
	if fresh := Probe(); len(fresh) != len(before) {
		t.Errorf("real probes again: %v, want %v", fresh, before)
	}
}
