// Package parallel runs a function over n indexes with a bound on how many
// calls run at once: the opener of a workload's database clients and the
// fan-out of a cluster run over its nodes share it, so that both hold the
// bound the same way.
package parallel

import "sync"

// Run calls fn(i) for every i in [0, n), each on its own goroutine, with at
// most limit calls running at once (a limit below 1 counts as 1), and
// returns when every call has returned. Calls start in index order; fn
// records its own result (each i has its own slot, so no lock is needed).
func Run(n, limit int, fn func(i int)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}

// First is Run for calls that can fail: it returns the error of the lowest
// i whose call failed (the others usually say the same), or nil.
func First(n, limit int, fn func(i int) error) error {
	errs := make([]error, n)
	Run(n, limit, func(i int) { errs[i] = fn(i) })
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
