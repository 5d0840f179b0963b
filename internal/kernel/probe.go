package kernel

import (
	"maps"
	"sync"
)

// probes holds Probe's answer, asked once per process: the running kernel
// does not change under a process, and live gathers repeat (watch re-runs
// the audit on its interval), each probe opening sockets and a pidfd for
// the same answer.
var probes struct {
	sync.Mutex
	fake func() map[string]bool // a test's probes (SetProbe); nil: probeKernel
	done bool
	got  map[string]bool
}

// Probe asks the running kernel, without any traffic, which of the
// facilities it can test cheaply are there: ids of Facilities mapped to
// present (true) or absent (false). A facility it cannot tell (a probe
// failing for another reason) or does not probe (the mountstats column
// needs an NFS mount; the lab's classifier is probed by lab up) is left
// out, and the release decides for it. Nil on systems other than Linux.
// The probes run once per process (concurrent first callers wait for
// them); every call returns a copy of their answer, the caller's to change.
func Probe() map[string]bool {
	probes.Lock()
	defer probes.Unlock()
	if !probes.done {
		run := probes.fake
		if run == nil {
			run = probeKernel
		}
		probes.got, probes.done = run(), true
	}
	return maps.Clone(probes.got)
}

// SetProbe replaces the probes of the running kernel by fake, for a test
// that makes a live gather see another kernel's facilities (nil restores
// the real probes). The next Probe asks fake, once, as it would the
// kernel. SetProbe returns the function that restores the probes and
// answer before it, for t.Cleanup.
func SetProbe(fake func() map[string]bool) (restore func()) {
	probes.Lock()
	defer probes.Unlock()
	was, done, got := probes.fake, probes.done, probes.got
	probes.fake, probes.done, probes.got = fake, false, nil
	return func() {
		probes.Lock()
		defer probes.Unlock()
		probes.fake, probes.done, probes.got = was, done, got
	}
}
