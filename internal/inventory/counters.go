package inventory

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/counters"
)

// kernelCounters are the /proc/net/snmp and /proc/net/netstat counters of
// docs/check.md, in report order.
var kernelCounters = []struct{ group, name string }{
	{"Ip", "ReasmReqds"}, {"Ip", "ReasmOKs"}, {"Ip", "ReasmFails"}, {"Ip", "ReasmTimeout"},
	{"Ip", "FragCreates"}, {"Ip", "FragFails"},
	{"Udp", "InDatagrams"}, {"Udp", "InErrors"}, {"Udp", "RcvbufErrors"}, {"Udp", "SndbufErrors"},
	{"TcpExt", "ListenOverflows"}, {"TcpExt", "ListenDrops"}, {"TcpExt", "IPReversePathFilter"},
}

// ifStatistics are the files of /sys/class/net/IF/statistics read per
// interface: packets for scale, then the error and drop counters.
var ifStatistics = []string{
	"rx_packets", "rx_errors", "rx_dropped", "rx_length_errors", "rx_crc_errors",
	"rx_missed_errors", "rx_over_errors", "tx_packets", "tx_errors", "tx_dropped",
}

type counterSample struct {
	at     time.Time
	kernel map[string]int64 // "Group Name"
	files  map[string]string
	ifs    map[string]map[string]int64
}

// gatherCounters reads the counters once, or twice CounterInterval apart
// to give deltas and rates.
func gatherCounters(ctx context.Context, src *Source, inv *Inventory, opts Options) {
	first, problems := sampleCounters(src, inv, opts)
	if first == nil {
		status := "unreadable"
		if _, err := src.ReadFile("/proc/net/snmp"); isNotExist(err) && len(inv.Interfaces) == 0 {
			status = "absent"
		}
		inv.addSection("counters", status, strings.Join(problems, "; "))
		return
	}
	c := &Counters{}
	second := first
	if opts.CounterInterval > 0 {
		if err := opts.wait(ctx, opts.CounterInterval); err != nil {
			problems = append(problems, fmt.Sprintf("interval sample cancelled: %v; totals only", err))
		} else if s, p := sampleCounters(src, inv, opts); s != nil {
			second = s
			problems = p
			c.IntervalNs = second.at.Sub(first.at)
			if c.IntervalNs <= 0 {
				c.IntervalNs = opts.CounterInterval
			}
		}
	}
	delta := func(before, after int64, ok bool) (*int64, *float64) {
		if c.IntervalNs == 0 || !ok {
			return nil, nil
		}
		d := max(after-before, 0) // a reset or wrap reads as no change
		r := float64(d) / c.IntervalNs.Seconds()
		return &d, &r
	}
	for _, k := range kernelCounters {
		key := k.group + " " + k.name
		v, ok := second.kernel[key]
		if !ok {
			continue
		}
		old, had := first.kernel[key]
		cnt := Counter{Group: k.group, Name: k.name, File: second.files[k.group], Total: v}
		cnt.Delta, cnt.PerSec = delta(old, v, had)
		c.Kernel = append(c.Kernel, cnt)
	}
	for _, ifc := range inv.Interfaces {
		vals, ok := second.ifs[ifc.Name]
		if !ok {
			continue
		}
		ic := IfCounters{Interface: ifc.Name}
		for _, name := range ifStatistics {
			v, ok := vals[name]
			if !ok {
				continue
			}
			old, had := first.ifs[ifc.Name][name]
			cnt := Counter{Group: ifc.Name, Name: name, File: ifc.File("statistics/" + name), Total: v}
			cnt.Delta, cnt.PerSec = delta(old, v, had)
			ic.Counters = append(ic.Counters, cnt)
		}
		c.Interfaces = append(c.Interfaces, ic)
	}
	inv.Counters = c
	detail := "totals since boot; rates not judged (use --interval)"
	if c.IntervalNs > 0 {
		detail = fmt.Sprintf("rates over %s", c.IntervalNs.Round(time.Millisecond))
	}
	if len(problems) > 0 {
		inv.addSection("counters", "partial", strings.Join(append(problems, detail), "; "))
		return
	}
	inv.addSection("counters", "ok", detail)
}

func sampleCounters(src *Source, inv *Inventory, opts Options) (*counterSample, []string) {
	s := &counterSample{at: opts.now(), kernel: map[string]int64{}, files: map[string]string{}, ifs: map[string]map[string]int64{}}
	var problems []string
	readAny := false
	for _, f := range []string{"/proc/net/snmp", "/proc/net/netstat"} {
		b, err := src.ReadFile(f)
		if err != nil {
			problems = append(problems, f+": "+errText(err))
			continue
		}
		t, err := counters.ParseSNMP(strings.NewReader(string(b)), nil)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
		}
		for g, fields := range t {
			s.files[g] = f
			for n, v := range fields {
				s.kernel[g+" "+n] = v
			}
		}
		readAny = readAny || len(t) > 0
	}
	for _, ifc := range inv.Interfaces {
		m := map[string]int64{}
		for _, name := range ifStatistics {
			v, err := src.ReadString(ifc.File("statistics/" + name))
			if err != nil {
				continue
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				m[name] = n
			}
		}
		if len(m) == 0 {
			problems = append(problems, ifc.File("statistics")+": unreadable")
			continue
		}
		s.ifs[ifc.Name] = m
		readAny = true
	}
	if !readAny {
		return nil, problems
	}
	return s, problems
}
