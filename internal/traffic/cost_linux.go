package traffic

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/counters"
)

func startMeter() (*meter, error) {
	s, err := counters.Take()
	if err != nil {
		return nil, err
	}
	return &meter{before: s, netns: NetnsID()}, nil
}

// NetnsID names the calling thread's network namespace, whose counters
// the meter reads, among all hosts: the host's boot id and the
// namespace's inode ("" when either cannot be read). Two ends with the
// same name count each other's packets in their counters (gc's nodes too).
func NetnsID() string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ns, err := os.Readlink(threadNetns())
	if err != nil {
		return ""
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + " " + ns
}

// stop returns the counter deltas and the host's softirq time since start.
func (m *meter) stop() (Counters, int64, error) {
	after, err := counters.Take()
	if err != nil {
		return Counters{}, 0, err
	}
	c, softirq := DeltaCounters(m.before, after)
	return c, softirq, nil
}

// DeltaCounters returns the counters of a namespace between two snapshots
// of it and the host's softirq time between them, in ns.
func DeltaCounters(before, after *counters.Snapshot) (Counters, int64) {
	d := counters.Sub(before, after)
	c := countersFrom(d.SNMP)
	softirq := int64(d.CPU.SoftIRQ) * int64(time.Second/counters.TicksPerSecond)
	return c, softirq
}

// threadResult is what a hot thread reports when it ends.
type threadResult struct {
	user, sys time.Duration
	err       error
}

// startThread runs fn on a new goroutine locked to its own OS thread,
// pinned to cpu when it is set, and reports fn's error with the thread's own
// CPU time (RUSAGE_THREAD). The goroutine exits without unlocking, so the
// runtime discards the thread and its pinning never leaks into the pool.
func startThread(cpu *int, fn func() error) <-chan threadResult {
	ch := make(chan threadResult, 1)
	go func() {
		runtime.LockOSThread()
		if cpu != nil {
			var set unix.CPUSet
			set.Set(*cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				ch <- threadResult{err: errorf("pin to cpu %d: %w", *cpu, err)}
				return
			}
		}
		u0, s0 := threadCPU()
		err := fn()
		u1, s1 := threadCPU()
		ch <- threadResult{user: u1 - u0, sys: s1 - s0, err: err}
	}()
	return ch
}

func threadCPU() (user, sys time.Duration) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// begin normalises spec and starts the meter of an end, unless the caller
// started it already (opt.meter); on failure the error is recorded in side
// and ok is false.
func begin(spec Spec, side *Side, opt Options) (_ Spec, _ *meter, ok bool) {
	spec, err := spec.Normalize()
	if err != nil {
		side.Error = err.Error()
		return spec, nil, false
	}
	if opt.meter != nil {
		return spec, opt.meter, true
	}
	m, err := startMeter()
	if err != nil {
		side.Error = err.Error()
		return spec, nil, false
	}
	return spec, m, true
}

// finish records the counter deltas and softirq time of an end, and a
// cancellation when nothing worse went wrong.
func (m *meter) finish(ctx context.Context, side *Side) {
	if ctx.Err() != nil && side.Error == "" {
		side.Error = "cancelled"
	}
	c, softirq, err := m.stop()
	side.Counters, side.CPU.SoftIRQNs, side.Netns = c, softirq, m.netns
	if err != nil && side.Error == "" {
		side.Error = err.Error()
	}
}

// CheckCPU reports whether this process may run threads on cpu (it is in
// the process's affinity mask), so --cpu is refused before a test starts.
func CheckCPU(cpu int) error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return errorf("cpu affinity: %w", err)
	}
	if cpu < 0 || cpu >= 1024 || !set.IsSet(cpu) {
		return errorf("cpu %d: this process may run on %d CPUs (%s)", cpu, set.Count(), cpuList(set))
	}
	return nil
}

func cpuList(set unix.CPUSet) string {
	var s []string
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			s = append(s, strconv.Itoa(i))
		}
	}
	return strings.Join(s, ",")
}
