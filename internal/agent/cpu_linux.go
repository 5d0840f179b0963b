package agent

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// CheckCPU reports whether this process may pin a thread to cpu (it is in
// the process's affinity mask: online, and not excluded by a cpuset or
// taskset). Handlers that pin threads on a client's request check first,
// so a request the agent cannot honour is refused with a reason instead of
// failing mid-run.
func CheckCPU(cpu int) error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("cpu %d: read this agent's CPU affinity: %w", cpu, err)
	}
	if cpu >= 0 && cpu < len(set)*64 && set.IsSet(cpu) {
		return nil
	}
	return fmt.Errorf("cpu %d is not available on this agent (it may use CPUs %s)", cpu, cpuList(&set))
}

// cpuList formats a CPU set the way /sys/devices/system/cpu/online does:
// "0-3,8,10-11".
func cpuList(set *unix.CPUSet) string {
	var parts []string
	n := len(set) * 64
	for i := 0; i < n; i++ {
		if !set.IsSet(i) {
			continue
		}
		j := i
		for j+1 < n && set.IsSet(j+1) {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(i))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
