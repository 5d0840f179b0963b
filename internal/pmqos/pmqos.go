// Package pmqos holds a PM QoS CPU-latency request for the length of a
// measurement, as cyclictest does: a process writes a 32-bit number of
// microseconds to /dev/cpu_dma_latency and keeps the file open; while it is
// open the kernel keeps every CPU out of idle states whose exit latency is
// longer. Closing the file ends the request, and the kernel closes it when
// the process dies, however it dies (kernel Documentation/power/pm_qos_interface.rst).
//
// One rule matters on KVM guests: the haltpoll cpuidle governor (driver
// haltpoll, /sys/devices/system/cpu/cpuidle/current_governor) stops
// halting an idle vCPU only for a request of exactly 0
// (drivers/cpuidle/governors/haltpoll.c); any other value, even 1 us, lets
// it halt as before.
//
// The agent side (agent.go) serves the request kind Kind, and holds only
// when the agent was started with agent.Config.AllowCPULatency; the hold
// ends with the session.
package pmqos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is the kernel's CPU-latency request file.
const Path = "/dev/cpu_dma_latency"

// MaxUS is the kernel's default aggregate (PM_QOS_CPU_LATENCY_DEFAULT_VALUE,
// 2000 s): no request at all. A request must be below it to mean anything.
const MaxUS = 2000000000

// ErrBadValue is a --cpu-latency value that is not a request.
var ErrBadValue = errors.New("bad CPU latency")

// ParseUS parses a request in whole microseconds: 0 to MaxUS-1. A unit
// suffix "us" is accepted ("0us", "5us").
func ParseUS(s string) (int32, error) {
	v := strings.TrimSuffix(strings.TrimSpace(s), "us")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n >= MaxUS {
		return 0, fmt.Errorf("%q: want whole microseconds, 0 to %d (0 keeps CPUs from any idle state with an exit latency, and is the only value a KVM guest's haltpoll governor obeys): %w", s, MaxUS-1, ErrBadValue)
	}
	return int32(n), nil
}
