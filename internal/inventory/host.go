package inventory

import (
	"fmt"
	"strings"
	"time"
)

// Host is the host side of the interconnect: how the node's CPUs idle and
// wake (cpuidle, haltpoll, the kernel command line, tuned, cpufreq), how
// much a virtual machine's vCPUs wait for their host (steal time), and how
// each NIC delivers its interrupts (coalescing, IRQs). A part the node does
// not have, or that could not be read, is nil (absent in JSON), never a
// zero value.
type Host struct {
	Idle     *CPUIdle  `json:"cpuidle,omitempty"`
	Haltpoll *Haltpoll `json:"haltpoll,omitempty"`
	Cmdline  *Cmdline  `json:"cmdline,omitempty"`
	Tuned    *Tuned    `json:"tuned,omitempty"`
	Freq     *CPUFreq  `json:"cpufreq,omitempty"`
	Steal    *Steal    `json:"steal,omitempty"`
	NICs     []NIC     `json:"nics,omitempty"`
}

// CPUIdle is the cpuidle framework's driver and governor and the idle
// states of the node's CPUs (kernel Documentation/admin-guide/pm/cpuidle.rst).
type CPUIdle struct {
	Driver       string `json:"driver,omitempty"` // intel_idle, acpi_idle, haltpoll, none
	Governor     string `json:"governor,omitempty"`
	GovernorFile string `json:"governor_file,omitempty"` // current_governor or current_governor_ro
	// CPUs is how many CPUs have a cpuidle directory.
	CPUs   int         `json:"cpus"`
	States []IdleState `json:"states"`
}

// IdleState is one idle state (stateK) merged over the CPUs that have it.
// A latency or residency that could not be read is nil.
type IdleState struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	LatencyUs   *int64 `json:"latency_us,omitempty"`   // exit latency
	ResidencyUs *int64 `json:"residency_us,omitempty"` // target residency
	// Enabled and Disabled count the CPUs whose disable file reads 0 and
	// non-zero; a CPU whose file could not be read counts in neither.
	Enabled  int    `json:"enabled_cpus"`
	Disabled int    `json:"disabled_cpus"`
	Dir      string `json:"dir"` // the first CPU's state directory, for evidence
}

// Haltpoll is the haltpoll idle governor's module parameters
// (/sys/module/haltpoll/parameters, kernel Documentation/virt/guest-halt-polling.rst).
type Haltpoll struct {
	// Params holds every parameter file as read (guest_halt_poll_ns,
	// guest_halt_poll_grow, guest_halt_poll_grow_start, ...).
	Params map[string]string `json:"params"`
	// PollNs is guest_halt_poll_ns; nil when it is not there or not a number.
	PollNs *int64 `json:"guest_halt_poll_ns,omitempty"`
	Dir    string `json:"dir"`
}

// HaltpollDir is where the haltpoll governor's parameters are.
const HaltpollDir = "/sys/module/haltpoll/parameters"

// Cmdline is what the kernel command line says about idling: the values of
// the parameters in CmdlineKeys that are on it.
type Cmdline struct {
	Params map[string]string `json:"params"` // "intel_idle.max_cstate": "1"; a flag without value: ""
	File   string            `json:"file"`
}

// CmdlineKeys are the kernel parameters check keeps (kernel-parameters.txt).
var CmdlineKeys = []string{"intel_idle.max_cstate", "processor.max_cstate", "idle",
	"haltpoll.guest_halt_poll_ns", "cpuidle_haltpoll.force", "cpuidle.off", "intel_pstate", "nohz_full"}

// Tuned is tuned's active profile and the CPU settings its profile files
// give (the [cpu] plugin's force_latency and governor), following include=.
type Tuned struct {
	Profile string `json:"profile"` // as /etc/tuned/active_profile has it; several are space-separated
	File    string `json:"file"`
	// ForceLatency is the [cpu] force_latency of the profile (the last
	// one set along the includes, as tuned merges them): "1",
	// "cstate.id_no_zero:1|3"; empty when no profile file sets it or
	// none could be read.
	ForceLatency     string `json:"force_latency,omitempty"`
	ForceLatencyFile string `json:"force_latency_file,omitempty"`
	Governor         string `json:"governor,omitempty"` // [cpu] governor
	// ProfileFiles are the profile files read, in include order.
	ProfileFiles []string `json:"profile_files,omitempty"`
}

// CPUFreq is the cpufreq driver and the scaling governor of each CPU.
type CPUFreq struct {
	Driver string `json:"driver,omitempty"` // intel_pstate, acpi-cpufreq, ...
	// Governors counts CPUs by scaling governor.
	Governors map[string]int `json:"governors"`
	File      string         `json:"file"` // the first CPU's scaling_governor
}

// Steal is the node's CPU time from /proc/stat's cpu line, in USER_HZ
// ticks: once since boot, and over an interval when check sampled twice.
type Steal struct {
	Total CPUTimes `json:"total"`
	// Interval is the difference of two samples IntervalNs apart; nil
	// with one sample.
	Interval   *CPUTimes     `json:"interval,omitempty"`
	IntervalNs time.Duration `json:"interval_ns,omitempty"`
	File       string        `json:"file"`
}

// NIC is how one interface with a device delivers its interrupts.
type NIC struct {
	Interface string `json:"interface"`
	// Coalesce is ETHTOOL_GCOALESCE's answer; nil where the driver has
	// none or it was not asked (a captured tree without the file).
	Coalesce     *Coalesce `json:"coalesce,omitempty"`
	CoalesceFile string    `json:"coalesce_file,omitempty"`
	// CoalesceNote says why Coalesce is nil when it was asked.
	CoalesceNote string `json:"coalesce_note,omitempty"`
	IRQs         []IRQ  `json:"irqs,omitempty"`
}

// IRQ is one interrupt of a NIC's device: its /proc/interrupts line and
// its affinity.
type IRQ struct {
	Number int     `json:"irq"`
	Name   string  `json:"name"`   // the action: virtio2-input.0, eth1-TxRx-0
	Counts []int64 `json:"counts"` // per CPU, since boot
	// Affinity is /proc/irq/N/smp_affinity_list ("0-3"); empty when
	// unreadable.
	Affinity     string `json:"affinity,omitempty"`
	AffinityFile string `json:"affinity_file,omitempty"`
}

// hostPaths are the fixed files of the host section.
const (
	cpuidleDir  = "/sys/devices/system/cpu/cpuidle"
	cpuDir      = "/sys/devices/system/cpu"
	CmdlineFile = "/proc/cmdline"
	StatFile    = "/proc/stat"
	TunedActive = "/etc/tuned/active_profile"
)

// gatherHost reads the host section. It is added to Sections only when
// something of it was found: a captured tree of another system (Solaris),
// or one taken before check read these files, says nothing about it.
func gatherHost(src *Source, inv *Inventory) {
	h := &Host{}
	var found, problems []string
	note := func(what string, err error) {
		if err != nil && !isNotExist(err) {
			problems = append(problems, fmt.Sprintf("%s: %s", what, errText(err)))
		}
	}
	h.Idle = readCPUIdle(src, note)
	if h.Idle != nil {
		found = append(found, fmt.Sprintf("cpuidle %s (%d CPUs, %d states)", orDash(h.Idle.Driver), h.Idle.CPUs, len(h.Idle.States)))
	}
	h.Haltpoll = readHaltpoll(src, note)
	if h.Haltpoll != nil && h.Haltpoll.PollNs != nil {
		found = append(found, fmt.Sprintf("guest_halt_poll_ns %d", *h.Haltpoll.PollNs))
	}
	if b, err := src.ReadFile(CmdlineFile); err == nil {
		h.Cmdline = &Cmdline{Params: ParseCmdline(strings.NewReader(string(b)), CmdlineKeys), File: CmdlineFile}
		found = append(found, "cmdline")
	} else {
		note(CmdlineFile, err)
	}
	h.Tuned = readTuned(src, note)
	if h.Tuned != nil {
		found = append(found, "tuned "+h.Tuned.Profile)
	}
	h.Freq = readCPUFreq(src, note)
	if h.Freq != nil {
		found = append(found, "cpufreq")
	}
	if t, err := readStat(src); err == nil {
		h.Steal = &Steal{Total: t, File: StatFile}
		found = append(found, "steal")
	} else {
		note(StatFile, err)
	}
	h.NICs = readNICs(src, inv, note)
	if len(found) == 0 && len(h.NICs) == 0 && len(problems) == 0 {
		return
	}
	inv.Host = h
	if len(h.NICs) > 0 {
		found = append(found, fmt.Sprintf("interrupts of %d NICs", len(h.NICs)))
	}
	if len(problems) > 0 {
		inv.addSection("host", "partial", strings.Join(append(found, problems...), "; "))
		return
	}
	inv.addSection("host", "ok", strings.Join(found, ", "))
}

// resampleSteal reads /proc/stat again after the counters' interval, so
// steal is judged over the same interval as the counters.
func resampleSteal(src *Source, inv *Inventory, first time.Time, opts Options) {
	if inv.Host == nil || inv.Host.Steal == nil || inv.Counters == nil || inv.Counters.IntervalNs <= 0 {
		return
	}
	t, err := readStat(src)
	if err != nil {
		return
	}
	d := t.Sub(inv.Host.Steal.Total)
	inv.Host.Steal.Total = t
	inv.Host.Steal.Interval = &d
	inv.Host.Steal.IntervalNs = opts.now().Sub(first)
	if inv.Host.Steal.IntervalNs <= 0 {
		inv.Host.Steal.IntervalNs = inv.Counters.IntervalNs
	}
}

func readStat(src *Source) (CPUTimes, error) {
	b, err := src.ReadFile(StatFile)
	if err != nil {
		return CPUTimes{}, err
	}
	return ParseStat(strings.NewReader(string(b)))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
