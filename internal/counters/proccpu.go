package counters

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// ParseProcStatCPU returns the user plus system CPU time of a process from
// its /proc/PID/stat line (utime and stime, fields 14 and 15, in ticks),
// reading past the command name, which may hold spaces and parentheses.
func ParseProcStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want 13 or more", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		v, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %q is not a tick count", s)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / TicksPerSecond, nil
}
