// Package casetest runs a test's cases as subtests all at once, for cases
// that spend their time waiting (timers, deadlines, a peer's delay) rather
// than computing. Subtests that call t.Parallel are held to -test.parallel,
// which defaults to GOMAXPROCS: two at a time on a two-core machine, so
// that waiting cases queue behind each other. Only tests import it.
package casetest

import (
	"sync"
	"testing"
)

// AtOnce runs f for cases 0 to n-1 as the subtests name(i), each in its
// own goroutine, and returns when all have ended. The testing package
// allows t.Run from several goroutines; such subtests are not held to
// -test.parallel. Cases that measure timing against a bound, or share
// state, do not belong here.
func AtOnce(t *testing.T, n int, name func(i int) string, f func(t *testing.T, i int)) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name(i), func(t *testing.T) { f(t, i) })
		}()
	}
	wg.Wait()
}
