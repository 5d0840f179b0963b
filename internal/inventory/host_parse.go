package inventory

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseCmdline returns the parameters of a kernel command line
// (/proc/cmdline) that keys names, with their values ("" for a flag
// without one). A parameter given twice keeps its last value, as the
// kernel's own parsing does; everything after "--" is for init and is
// not read.
func ParseCmdline(r io.Reader, keys []string) map[string]string {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]string{}
	b, _ := io.ReadAll(io.LimitReader(r, MaxFileBytes))
	for _, w := range strings.Fields(string(b)) {
		if w == "--" {
			break
		}
		k, v, _ := strings.Cut(w, "=")
		// The kernel treats - and _ alike in parameter names.
		if norm := strings.ReplaceAll(k, "-", "_"); want[norm] {
			out[norm] = strings.Trim(v, `"`)
		}
	}
	return out
}

// CPUTimes is the cpu line of /proc/stat (all CPUs), in USER_HZ ticks.
// Guest time is already counted in User and Nice, so it is not kept.
type CPUTimes struct {
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
}

// Busy is the time the CPUs ran something: user, nice, system, irq and
// softirq.
func (t CPUTimes) Busy() uint64 { return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ }

// Sub returns t - o field by field; a counter that went back (a reset)
// gives 0.
func (t CPUTimes) Sub(o CPUTimes) CPUTimes {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return CPUTimes{d(t.User, o.User), d(t.Nice, o.Nice), d(t.System, o.System), d(t.Idle, o.Idle),
		d(t.IOWait, o.IOWait), d(t.IRQ, o.IRQ), d(t.SoftIRQ, o.SoftIRQ), d(t.Steal, o.Steal)}
}

// ErrNoSteal is returned by ParseStat for a cpu line without a steal
// column (kernels before 2.6.11, or not /proc/stat at all).
var ErrNoSteal = errors.New("no steal column in the cpu line")

// ParseStat reads the first line of /proc/stat, "cpu user nice system idle
// iowait irq softirq steal ...".
func ParseStat(r io.Reader) (CPUTimes, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1<<20)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 9 {
			return CPUTimes{}, ErrNoSteal
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("cpu line: field %d %q is not a number", i+1, f[i+1])
			}
			v[i] = n
		}
		return CPUTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, nil
	}
	if err := s.Err(); err != nil {
		return CPUTimes{}, err
	}
	return CPUTimes{}, errors.New("no cpu line")
}

// TunedConf is what check reads of one tuned profile file (tuned.conf):
// [main] include= and the [cpu] plugin's force_latency and governor.
type TunedConf struct {
	Include      []string
	ForceLatency string
	Governor     string
	HasLatency   bool // force_latency is set (even to "")
}

// ParseTunedConf reads a tuned.conf (an INI file; tuned.conf(5)).
func ParseTunedConf(r io.Reader) TunedConf {
	var c TunedConf
	section := ""
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1<<20)
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			section = strings.TrimSpace(l[1 : len(l)-1])
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case section == "main" && k == "include":
			c.Include = append(c.Include, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })...)
		case section == "cpu" && k == "force_latency":
			c.ForceLatency, c.HasLatency = v, true
		case section == "cpu" && k == "governor":
			c.Governor = v
		}
	}
	return c
}

// ParseInterrupts reads /proc/interrupts: the numbered lines, each with
// its count per CPU and its name (the last field: the action, such as
// virtio2-input.0 or eth1-TxRx-0). Lines for NMI, LOC and the like are
// not numbered and not returned.
func ParseInterrupts(r io.Reader) (map[int]IRQ, int, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 4<<20)
	if !s.Scan() {
		return nil, 0, errors.New("empty")
	}
	cpus := len(strings.Fields(s.Text()))
	if cpus == 0 {
		return nil, 0, errors.New("no CPU header line")
	}
	out := map[int]IRQ{}
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			continue
		}
		irq := IRQ{Number: n}
		for i := 1; i <= cpus && i < len(f); i++ {
			c, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				break
			}
			irq.Counts = append(irq.Counts, c)
		}
		if rest := f[1+len(irq.Counts):]; len(rest) > 0 {
			irq.Name = rest[len(rest)-1]
		}
		out[n] = irq
	}
	return out, cpus, s.Err()
}

// Coalesce is a NIC's interrupt coalescing as ETHTOOL_GCOALESCE gives it
// (`ethtool -c`): a receive interrupt waits up to RxUsecs or RxFrames,
// unless adaptive coalescing chooses.
type Coalesce struct {
	RxUsecs    uint32 `json:"rx_usecs"`
	RxFrames   uint32 `json:"rx_frames"`
	AdaptiveRx bool   `json:"adaptive_rx"`
	TxUsecs    uint32 `json:"tx_usecs"`
	TxFrames   uint32 `json:"tx_frames"`
}

// coalesceHeader starts the file check writes for a NIC's coalescing, a
// fact that is not in any file of the node (SIOCETHTOOL asks the driver).
const coalesceHeader = "# interlink: ETHTOOL_GCOALESCE asked of the driver by check (as 'ethtool -c' shows it)\n"

// CoalesceFile is the file of a captured tree that holds what check asked
// the driver of interface name about its coalescing.
func CoalesceFile(name string) string { return "/interlink/ethtool/" + name + "/coalesce" }

// FormatCoalesce writes c (or, when c is nil, the driver's refusal) in
// the form ParseCoalesce reads.
func FormatCoalesce(c *Coalesce, refusal string) []byte {
	if c == nil {
		return []byte(coalesceHeader + "unsupported: " + refusal + "\n")
	}
	onOff := map[bool]string{true: "on", false: "off"}
	return []byte(fmt.Sprintf("%sadaptive-rx: %s\nrx-usecs: %d\nrx-frames: %d\ntx-usecs: %d\ntx-frames: %d\n",
		coalesceHeader, onOff[c.AdaptiveRx], c.RxUsecs, c.RxFrames, c.TxUsecs, c.TxFrames))
}

// ParseCoalesce reads a coalescing file: "key: value" lines (adaptive-rx,
// rx-usecs, rx-frames, tx-usecs, tx-frames), or "unsupported: REASON"
// when the driver has none (then c is nil and note the reason).
func ParseCoalesce(r io.Reader) (c *Coalesce, note string, err error) {
	s := bufio.NewScanner(r)
	c = &Coalesce{}
	seen := false
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil, "", fmt.Errorf("line %q: want key: value", l)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "unsupported" {
			return nil, v, nil
		}
		var dst *uint32
		switch k {
		case "adaptive-rx":
			c.AdaptiveRx, seen = v == "on", true
			continue
		case "rx-usecs":
			dst = &c.RxUsecs
		case "rx-frames":
			dst = &c.RxFrames
		case "tx-usecs":
			dst = &c.TxUsecs
		case "tx-frames":
			dst = &c.TxFrames
		default:
			continue
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, "", fmt.Errorf("%s %q is not a number", k, v)
		}
		*dst, seen = uint32(n), true
	}
	if err := s.Err(); err != nil {
		return nil, "", err
	}
	if !seen {
		return nil, "", errors.New("no coalescing values")
	}
	return c, "", nil
}
