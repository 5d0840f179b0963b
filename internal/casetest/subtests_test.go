package casetest

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestAtOnce: every case runs, under its name, and all run at the same
// time: each waits until all have started, which subtests held to
// -test.parallel 1 (or run one after another) never reach.
func TestAtOnce(t *testing.T) {
	const n = 5
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	ran := map[string]bool{}
	AtOnce(t, n, func(i int) string { return fmt.Sprintf("case%d", i) }, func(t *testing.T, i int) {
		mu.Lock()
		ran[t.Name()] = true
		if started++; started == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(60 * time.Second): // only against a hang
			t.Errorf("case %d: the %d cases did not all run at once", i, n)
		}
	})
	for i := range n {
		if name := fmt.Sprintf("TestAtOnce/case%d", i); !ran[name] {
			t.Errorf("%s did not run (ran %v)", name, ran)
		}
	}
}
