// Package counters reads kernel counters (/proc/net/snmp, /proc/net/netstat,
// /proc/net/dev, /proc/stat) as snapshots and subtracts them into deltas.
//
// The parsers take an io.Reader so the same code serves a live node, a
// captured tree under --root, and a benchmark sampling the counters of the
// network namespace it runs in. prometheus/procfs parses these files too, but
// only at per-PID paths of a mounted procfs; a goroutine switched into a lab
// namespace must read /proc/thread-self/net instead, and a captured bundle
// has no PIDs, so the (small, fuzzed) parsers live here.
package counters

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Table holds counters of the "Header: names / Header: values" files
// (/proc/net/snmp and /proc/net/netstat), keyed by group ("Ip", "Udp",
// "TcpExt", ...) then field ("ReasmFails", ...). Values are int64 because a
// few are signed (Tcp MaxConn is -1).
type Table map[string]map[string]int64

// Get returns the value of group.field and whether it exists.
func (t Table) Get(group, field string) (int64, bool) {
	v, ok := t[group][field]
	return v, ok
}

// Ptr returns group.field as a pointer to a copy, nil when the table
// lacks it: for result fields that are absent (JSON omitempty, "n/a" in
// text) when this kernel does not keep the counter.
func (t Table) Ptr(group, field string) *int64 {
	if v, ok := t[group][field]; ok {
		return &v
	}
	return nil
}

// ParseSNMP parses /proc/net/snmp or /proc/net/netstat into t (which may be
// nil; the filled table is returned so two files can be merged into one).
func ParseSNMP(r io.Reader, t Table) (Table, error) {
	if t == nil {
		t = Table{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		names := strings.Fields(sc.Text())
		if len(names) == 0 {
			continue
		}
		if !sc.Scan() {
			return t, fmt.Errorf("line %d: header %q without a values line", line, names[0])
		}
		line++
		values := strings.Fields(sc.Text())
		if len(values) != len(names) || names[0] != values[0] || !strings.HasSuffix(names[0], ":") {
			return t, fmt.Errorf("line %d: values do not match header %q", line, names[0])
		}
		group := strings.TrimSuffix(names[0], ":")
		m := t[group]
		if m == nil {
			m = map[string]int64{}
			t[group] = m
		}
		for i := 1; i < len(names); i++ {
			v, err := strconv.ParseInt(values[i], 10, 64)
			if err != nil {
				// Some counters are unsigned 64-bit and may exceed int64.
				u, uerr := strconv.ParseUint(values[i], 10, 64)
				if uerr != nil {
					return t, fmt.Errorf("line %d: %s %s: bad value %q", line, group, names[i], values[i])
				}
				v = int64(u >> 1) // keep monotonic; such values only matter as deltas
			}
			m[names[i]] = v
		}
	}
	return t, sc.Err()
}

// Dev is one interface's line in /proc/net/dev.
type Dev struct {
	RxBytes, RxPackets, RxErrors, RxDropped, RxFIFO, RxFrame, RxCompressed, RxMulticast uint64
	TxBytes, TxPackets, TxErrors, TxDropped, TxFIFO, TxColls, TxCarrier, TxCompressed   uint64
}

// ParseNetDev parses /proc/net/dev into a map keyed by interface name.
func ParseNetDev(r io.Reader) (map[string]Dev, error) {
	out := map[string]Dev{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || line <= 2 && strings.Contains(rest, "|") || strings.Contains(name, "|") {
			continue // the two header lines
		}
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " \t") {
			return out, fmt.Errorf("line %d: bad interface name %q", line, name)
		}
		f := strings.Fields(rest)
		if len(f) != 16 {
			return out, fmt.Errorf("line %d: want 16 counters, got %d", line, len(f))
		}
		var v [16]uint64
		for i, s := range f {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return out, fmt.Errorf("line %d: bad counter %q", line, s)
			}
			v[i] = n
		}
		out[name] = Dev{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
			v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]}
	}
	return out, sc.Err()
}

// TicksPerSecond is USER_HZ, the unit of /proc/stat; it is 100 on every
// Linux architecture regardless of the kernel's internal HZ.
const TicksPerSecond = 100

// CPU holds the system-wide CPU time from the "cpu" line of /proc/stat, in
// ticks (1/TicksPerSecond s). Softirq is where most network stack work is
// accounted, which per-process getrusage never shows.
type CPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Busy returns the non-idle ticks.
func (c CPU) Busy() uint64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal }

// ParseStat parses the aggregate "cpu" line of /proc/stat and the number of
// per-CPU lines.
func ParseStat(r io.Reader) (cpu CPU, ncpu int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	found := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			ncpu++
			continue
		}
		if len(f) < 8 {
			return cpu, 0, fmt.Errorf("cpu line has %d fields, want at least 8", len(f))
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= 8; i++ {
			n, perr := strconv.ParseUint(f[i], 10, 64)
			if perr != nil {
				return cpu, 0, fmt.Errorf("cpu line: bad value %q", f[i])
			}
			v[i-1] = n
		}
		cpu = CPU{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		found = true
	}
	if err := sc.Err(); err != nil {
		return cpu, 0, err
	}
	if !found {
		return cpu, 0, fmt.Errorf("no cpu line")
	}
	return cpu, ncpu, nil
}
