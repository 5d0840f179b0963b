package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
)

// host prints what check read of how the node wakes for a block (see
// hostLines). Nothing when the tree has none of it.
func host(p *printer, inv *inventory.Inventory) {
	lines := hostLines(inv)
	if len(lines) == 0 {
		return
	}
	p.f("\nhost:")
	for i, l := range lines {
		if i > 0 {
			p.f("     ")
		}
		p.f(" %s\n", l)
	}
}

// hostLines are what check read of how the node wakes for a block, a line
// each, for the text and the HTML: the idle states, halt polling, the
// command line's idle settings, tuned, cpufreq, steal and each NIC's
// coalescing and interrupts; none when the tree has none of it.
func hostLines(inv *inventory.Inventory) []string {
	h := inv.Host
	if h == nil {
		return nil
	}
	var lines []string
	if h.Idle != nil {
		lines = append(lines, fmt.Sprintf("cpuidle %s, governor %s: %s", orDash(h.Idle.Driver), orDash(h.Idle.Governor), idleStates(h.Idle)))
	}
	if h.Haltpoll != nil && h.Haltpoll.PollNs != nil {
		lines = append(lines, fmt.Sprintf("haltpoll: guest_halt_poll_ns %d", *h.Haltpoll.PollNs))
	}
	if h.Cmdline != nil && len(h.Cmdline.Params) > 0 {
		var kv []string
		for k, v := range h.Cmdline.Params {
			if v != "" {
				k += "=" + v
			}
			kv = append(kv, k)
		}
		sort.Strings(kv)
		lines = append(lines, "kernel command line: "+strings.Join(kv, " "))
	}
	if h.Tuned != nil {
		lines = append(lines, fmt.Sprintf("tuned: %s, force_latency %s", h.Tuned.Profile, orDash(h.Tuned.ForceLatency)))
	}
	if h.Freq != nil {
		var govs []string
		for g, n := range h.Freq.Governors {
			govs = append(govs, fmt.Sprintf("%s on %d CPUs", g, n))
		}
		sort.Strings(govs)
		lines = append(lines, fmt.Sprintf("cpufreq %s: %s", orDash(h.Freq.Driver), strings.Join(govs, ", ")))
	}
	if s := h.Steal; s != nil {
		t, when := s.Total, "since boot"
		if s.Interval != nil {
			t, when = *s.Interval, "over "+s.IntervalNs.String()
		}
		lines = append(lines, fmt.Sprintf("steal: %d of %d ticks with work (busy + steal), %s", t.Steal, t.Busy()+t.Steal, when))
	}
	for _, n := range h.NICs {
		lines = append(lines, nicLine(n))
	}
	return lines
}

// idleStates lists the states with their exit latencies, and which CPUs
// have them off.
func idleStates(c *inventory.CPUIdle) string {
	var parts []string
	for _, st := range c.States {
		s := st.Name + " "
		if st.LatencyUs != nil {
			s += fmt.Sprintf("%d us", *st.LatencyUs)
		} else {
			s += "-"
		}
		switch {
		case st.Disabled > 0 && st.Enabled == 0:
			s += " (off)"
		case st.Disabled > 0:
			s += fmt.Sprintf(" (off on %d of %d CPUs)", st.Disabled, st.Disabled+st.Enabled)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no idle states"
	}
	return strings.Join(parts, ", ")
}

// nicLine is one NIC's coalescing and the CPUs its interrupts went to.
func nicLine(n inventory.NIC) string {
	s := n.Interface + ": "
	switch c := n.Coalesce; {
	case c != nil:
		s += fmt.Sprintf("rx-usecs %d, rx-frames %d, adaptive-rx %s", c.RxUsecs, c.RxFrames, map[bool]string{true: "on", false: "off"}[c.AdaptiveRx])
	case n.CoalesceNote != "":
		s += "coalescing n/a (" + n.CoalesceNote + ")"
	default:
		s += "coalescing n/a"
	}
	var irqs []string
	for _, irq := range n.IRQs {
		irqs = append(irqs, fmt.Sprintf("%d %s (affinity %s)", irq.Number, irq.Name, orDash(irq.Affinity)))
	}
	if len(irqs) > 0 {
		s += "; IRQs " + strings.Join(irqs, ", ")
	}
	return s
}
