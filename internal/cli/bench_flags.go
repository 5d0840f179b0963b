package cli

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/traffic"
)

// benchModeFlags are the flags that mean something in only some modes.
var benchModeFlags = map[string][]string{
	"--parallel": {"tcp"}, "--len": {"tcp", "udp"}, "--rate": {"udp", "blocks", "gc"}, "--flow": {"udp"},
	"--request": {"blocks", "gc"}, "--block": {"blocks", "gc"}, "--outstanding": {"blocks", "gc"}, "--timeout": {"blocks", "gc"},
	"--split": {"blocks", "gc"},
}

// checkBenchFlags refuses, before anything connects, values that the
// library would otherwise take as "default" (a zero), values out of range,
// flags that do nothing in mode, and a --cpu this process may not run on.
func checkBenchFlags(f *pflag.FlagSet, mode string) error {
	for name, modes := range benchModeFlags {
		if !f.Changed(name[2:]) {
			continue
		}
		ok := false
		for _, m := range modes {
			ok = ok || m == mode
		}
		if !ok {
			return usageError("bench: %s does nothing in --mode %s", name, mode)
		}
	}
	geti := func(name string) int { v, _ := f.GetInt(name); return v }
	if v := geti("parallel"); v < 1 || v > traffic.MaxParallel {
		return usageError("bench: --parallel %d: want 1 to %d streams", v, traffic.MaxParallel)
	}
	if v := geti("outstanding"); v < 1 || v > traffic.MaxOutstanding {
		return usageError("bench: --outstanding %d: want 1 to %d requests in flight", v, traffic.MaxOutstanding)
	}
	if v := geti("link-overhead"); v < 0 || v > 200 {
		return usageError("bench: --link-overhead %d: want 0 to 200 bytes per packet (38 for Ethernet, 14 for a tbf shaper)", v)
	}
	if iv, _ := f.GetDuration("interval"); iv < traffic.MinInterval {
		return usageError("bench: --interval %v: want at least %v", iv, traffic.MinInterval)
	}
	if to, _ := f.GetDuration("timeout"); to < 1e6 || to > 60e9 {
		return usageError("bench: --timeout %v: want 1ms to 1m", to)
	}
	for _, name := range []string{"cpu", "peer-cpu"} {
		if f.Changed(name) && geti(name) < 0 {
			return usageError("bench: --%s %d: want a CPU number (0 or more)", name, geti(name))
		}
	}
	if f.Changed("cpu") {
		if err := traffic.CheckCPU(geti("cpu")); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return usageError("bench: --cpu: %s", strings.TrimPrefix(err.Error(), "traffic: "))
		}
	}
	return nil
}

// requestRate parses --rate where it counts requests a second (blocks, and
// gc per node): more than 0 and at most max; what names the rate in the
// error.
func requestRate(v, mode, what string, max float64) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || !(r > 0 && r <= max) {
		return 0, usageError("bench: --rate %q: in --mode %s, %s (more than 0, at most %g)", v, mode, what, max)
	}
	return r, nil
}
