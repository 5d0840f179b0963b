package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// deepLatencyUs is the exit latency above which an idle state is deep:
// C1 (1-2 us) and C1E (about 10 us) stay under it, C3 (40 us) and C6
// (100 us and more on many Xeons) are above, as is a block's whole round
// trip on a fast interconnect.
const deepLatencyUs = 20

const (
	cpuIdleSource = "kernel Documentation/admin-guide/pm/cpuidle.rst (idle states, exit latency, PM QoS), " +
		"Documentation/virt/guest-halt-polling.rst (guest_halt_poll_ns, default 200000), " +
		"drivers/cpuidle/governors/haltpoll.c (polls instead of halting only for a PM QoS limit of 0), " +
		"Documentation/power/pm_qos_interface.rst (/dev/cpu_dma_latency), kernel-parameters.txt " +
		"(intel_idle.max_cstate, processor.max_cstate, idle=); tuned's latency-performance and sap-hana-kvm-guest profiles"
	cpuFreqSource = "kernel Documentation/admin-guide/pm/cpufreq.rst and intel_pstate.rst (scaling governors); " +
		"tuned's latency-performance and throughput-performance profiles (governor=performance)"
)

func init() {
	register(
		Rule{ID: "CPU-IDLE", Severity: Warning,
			Also:   []SeverityCase{{Info, "when deep C-states are enabled but tuned's force_latency keeps the CPUs out of them while tuned runs"}},
			Title:  "idle CPUs are slow to wake for an arriving block: guest halt polling off, or deep C-states enabled",
			Source: cpuIdleSource, Check: checkCPUIdle},
		Rule{ID: "CPU-FREQ", Severity: Warning,
			Also:   []SeverityCase{{Info, "for the ondemand, conservative and schedutil governors"}},
			Title:  "CPUs run a power-saving frequency governor (powersave; ondemand, conservative, schedutil as info)",
			Source: cpuFreqSource, Check: checkCPUFreq},
	)
}

func checkCPUIdle(inv *inventory.Inventory, cfg *Config) []Finding {
	h := inv.Host
	if h == nil || h.Idle == nil {
		return nil
	}
	if h.Idle.Driver == "haltpoll" && h.Haltpoll != nil && h.Haltpoll.PollNs != nil &&
		(h.Idle.Governor == "haltpoll" || h.Idle.Governor == "") {
		return checkHaltpoll(h)
	}
	return checkCStates(h)
}

// tunedLatency is the PM QoS limit tuned's active profile requests, in
// us: its force_latency resolved as tuned does it.
func tunedLatency(h *inventory.Host) (us int64, ev []Evidence, ok bool) {
	if h.Tuned == nil {
		return 0, nil, false
	}
	ev = []Evidence{{What: "tuned active profile", Value: h.Tuned.Profile, File: h.Tuned.File}}
	if h.Tuned.ForceLatency == "" {
		return 0, ev, false
	}
	var states []inventory.IdleState
	if h.Idle != nil {
		states = h.Idle.States
	}
	us, ok = ResolveForceLatency(h.Tuned.ForceLatency, states)
	v := h.Tuned.ForceLatency
	if ok && v != strconv.FormatInt(us, 10) {
		v += fmt.Sprintf(" (%d us here)", us)
	}
	ev = append(ev, Evidence{What: "tuned [cpu] force_latency", Value: v, File: h.Tuned.ForceLatencyFile})
	return us, ev, ok
}

// ResolveForceLatency gives the PM QoS limit, in us, that tuned's [cpu]
// force_latency value asks for on a CPU with these idle states, as tuned's
// cpu plugin resolves it: alternatives separated by "|", the first that
// resolves wins; "cstate.id:K" is state K's exit latency, "cstate.name:N"
// the named state's, a "_no_zero" form skips a latency of 0; a number is
// itself; "n/a" requests nothing.
func ResolveForceLatency(v string, states []inventory.IdleState) (int64, bool) {
	for _, alt := range strings.Split(v, "|") {
		alt = strings.TrimSpace(alt)
		kind, arg, isState := strings.Cut(alt, ":")
		if !isState {
			if n, err := strconv.ParseInt(alt, 10, 64); err == nil && n >= 0 {
				return n, true
			}
			continue
		}
		noZero := strings.HasSuffix(kind, "_no_zero")
		kind = strings.TrimSuffix(kind, "_no_zero")
		for _, st := range states {
			match := kind == "cstate.id" && strconv.Itoa(st.Index) == arg || kind == "cstate.name" && st.Name == arg
			if !match || st.LatencyUs == nil || noZero && *st.LatencyUs == 0 {
				continue
			}
			return *st.LatencyUs, true
		}
	}
	return 0, false
}

func checkHaltpoll(h *inventory.Host) []Finding {
	ns := *h.Haltpoll.PollNs
	qos, tev, tok := tunedLatency(h)
	if ns > 0 || tok && qos == 0 {
		return nil // polling, or held awake by a PM QoS request of 0
	}
	ev := []Evidence{
		{What: "guest_halt_poll_ns", Value: "0", File: inventory.HaltpollDir + "/guest_halt_poll_ns"},
		{What: "cpuidle driver", Value: h.Idle.Driver, File: "/sys/devices/system/cpu/cpuidle/current_driver"},
	}
	if h.Idle.Governor != "" {
		ev = append(ev, Evidence{What: "cpuidle governor", Value: h.Idle.Governor, File: h.Idle.GovernorFile})
	}
	msg := "guest halt polling is off (guest_halt_poll_ns 0): an idle vCPU halts at once, and a block that arrives for it " +
		"waits for a VM exit and entry before the reader runs (at one block in flight most of the round trip); " +
		"the guest's haltpoll driver also turns the host's halt polling off (MSR_KVM_POLL_CONTROL), so nothing polls"
	fix := "now: echo 200000 > /sys/module/haltpoll/parameters/guest_halt_poll_ns (the kernel's default); to keep it: "
	onCmdline := false
	if h.Cmdline != nil {
		if v, ok := h.Cmdline.Params["haltpoll.guest_halt_poll_ns"]; ok {
			onCmdline = true
			ev = append(ev, Evidence{What: "kernel command line haltpoll.guest_halt_poll_ns", Value: v, File: h.Cmdline.File})
			msg += "; the kernel command line sets it"
			fix += "replace haltpoll.guest_halt_poll_ns=" + v + " on the kernel command line with "
		}
	}
	if !onCmdline {
		fix += "add "
	}
	fix += "haltpoll.guest_halt_poll_ns=200000 (grubby --update-kernel=ALL --args=haltpoll.guest_halt_poll_ns=200000; " +
		"elsewhere GRUB_CMDLINE_LINUX in /etc/default/grub), or set /sys/module/haltpoll/parameters/guest_halt_poll_ns=200000 " +
		"in the [sysfs] section of a tuned profile, as tuned's sap-hana-kvm-guest profile sets 2400000; polling costs host CPU while a vCPU waits"
	if tok {
		ev = append(ev, tev...)
		msg += fmt.Sprintf("; tuned's %s does not help: its force_latency asks for %d us, and the haltpoll governor "+
			"stops halting only for a PM QoS request of exactly 0", h.Tuned.Profile, qos)
	}
	return []Finding{{Severity: Warning, Object: "cpuidle haltpoll", Message: msg, Evidence: ev, Fix: fix}}
}

// checkCStates judges the idle states of a host that is not a haltpoll
// guest: an enabled state with an exit latency above deepLatencyUs.
func checkCStates(h *inventory.Host) []Finding {
	var deep []inventory.IdleState
	for _, st := range h.Idle.States {
		if st.Enabled > 0 && st.LatencyUs != nil && *st.LatencyUs > deepLatencyUs {
			deep = append(deep, st)
		}
	}
	if len(deep) == 0 {
		return nil
	}
	sort.Slice(deep, func(i, j int) bool { return *deep[i].LatencyUs > *deep[j].LatencyUs })
	ev := []Evidence{{What: "cpuidle driver", Value: h.Idle.Driver, File: "/sys/devices/system/cpu/cpuidle/current_driver"}}
	var names []string
	for _, st := range deep {
		ev = append(ev, Evidence{What: st.Name + " exit latency (us)", Value: strconv.FormatInt(*st.LatencyUs, 10), File: st.Dir + "/latency"},
			Evidence{What: st.Name + " disable", Value: fmt.Sprintf("0 on %d of %d CPUs", st.Enabled, h.Idle.CPUs), File: st.Dir + "/disable"})
		names = append(names, fmt.Sprintf("%s (%d us)", st.Name, *st.LatencyUs))
	}
	if h.Cmdline != nil {
		for _, k := range []string{"intel_idle.max_cstate", "processor.max_cstate", "idle"} {
			if v, ok := h.Cmdline.Params[k]; ok {
				ev = append(ev, Evidence{What: "kernel command line " + k, Value: v, File: h.Cmdline.File})
			}
		}
	}
	qos, tev, tok := tunedLatency(h)
	ev = append(ev, tev...)
	obj := "cpuidle " + h.Idle.Driver
	if tok && qos < *deep[len(deep)-1].LatencyUs {
		return []Finding{{Severity: Info, Object: obj,
			Message: fmt.Sprintf("deep idle states are enabled (%s), but tuned's %s holds a PM QoS limit of %d us, which keeps the CPUs out of them while tuned runs",
				strings.Join(names, ", "), h.Tuned.Profile, qos),
			Evidence: ev,
			Fix:      "nothing while tuned runs; to hold without it, intel_idle.max_cstate=1 (processor.max_cstate=1 with acpi_idle) on the kernel command line"}}
	}
	arg := "intel_idle.max_cstate=1"
	if h.Idle.Driver == "acpi_idle" {
		arg = "processor.max_cstate=1"
	}
	msg := fmt.Sprintf("idle CPUs may enter %s: a CPU woken from %s by an arriving block takes up to %d us before the reader runs, "+
		"more than a fast interconnect's whole round trip", strings.Join(names, ", "), deep[0].Name, *deep[0].LatencyUs)
	if tok {
		msg += fmt.Sprintf("; tuned's %s asks for %d us, which still allows them", h.Tuned.Profile, qos)
	}
	return []Finding{{Severity: Warning, Object: obj, Message: msg, Evidence: ev,
		Fix: fmt.Sprintf("tuned-adm profile latency-performance (its force_latency keeps CPUs in C1 while tuned runs), or %s on the kernel command line "+
			"(grubby --update-kernel=ALL --args=%s; elsewhere GRUB_CMDLINE_LINUX in /etc/default/grub) and a reboot; now, until reboot: "+
			"echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/disable for each deep state K on every CPU N; deep states save idle power, which this gives up", arg, arg)}}
}

func checkCPUFreq(inv *inventory.Inventory, cfg *Config) []Finding {
	h := inv.Host
	if h == nil || h.Freq == nil {
		return nil
	}
	total := 0
	var govs []string
	for g, n := range h.Freq.Governors {
		total += n
		govs = append(govs, g)
	}
	sort.Strings(govs)
	var out []Finding
	for _, g := range govs {
		sev := Info
		switch g {
		case "powersave":
			sev = Warning
		case "ondemand", "conservative", "schedutil":
		default:
			continue
		}
		msg := fmt.Sprintf("%d of %d CPUs run the %s governor", h.Freq.Governors[g], total, g)
		switch {
		case g == "powersave" && h.Freq.Driver == "intel_pstate":
			msg += " (intel_pstate's own algorithm, not the lowest clock): it lowers the clock of idle CPUs"
		case g == "powersave":
			msg += " (" + h.Freq.Driver + "): it holds the lowest clock"
		default:
			msg += ": it lowers the clock of idle CPUs"
		}
		msg += ", so a CPU woken for a block runs its first microseconds slowly, and a lightly loaded interconnect is slower than a busy one"
		ev := []Evidence{{What: "scaling_governor", Value: g, File: h.Freq.File}}
		if h.Freq.Driver != "" {
			ev = append(ev, Evidence{What: "scaling_driver", Value: h.Freq.Driver, File: strings.TrimSuffix(h.Freq.File, "scaling_governor") + "scaling_driver"})
		}
		out = append(out, Finding{Severity: sev, Object: "cpufreq " + g, Message: msg, Evidence: ev,
			Fix: "tuned-adm profile latency-performance (or throughput-performance): both set governor=performance and keep it across reboots; " +
				"now: cpupower frequency-set -g performance; it costs power on idle CPUs"})
	}
	return out
}
