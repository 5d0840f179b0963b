package rules

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/inventory"
)

// hostFindings audits a tree with eth1 as the interconnect and returns
// the findings of rule id, with the whole result.
func hostFindings(t *testing.T, root, id string) ([]Finding, *Result) {
	t.Helper()
	r := Check(gather(t, root, inventory.Options{}), Config{Interconnect: []string{"eth1"}})
	checkEvidence(t, root, r)
	var out []Finding
	for _, f := range r.Findings {
		if f.Rule == id {
			out = append(out, f)
		}
	}
	return out, r
}

// overlay copies fixture tree name into a temporary directory and writes
// files (node path -> content) over it.
func overlay(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+name, dir)
	for p, c := range files {
		fixturetest.Write(t, dir, p, c)
	}
	return dir
}

func hasEvidence(f Finding, what string) bool {
	for _, e := range f.Evidence {
		if strings.Contains(e.What, what) {
			return true
		}
	}
	return false
}

// TestCPUIdleHaltpoll: a KVM guest with guest halt polling off warns and
// names guest_halt_poll_ns, with a fix that survives a reboot; at the
// kernel's default 200000 there is no such warning.
func TestCPUIdleHaltpoll(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"kvm-guest-haltpoll-0", "CPU-IDLE")
	if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "guest_halt_poll_ns 0") || !hasEvidence(fs[0], "guest_halt_poll_ns") {
		t.Fatalf("guest_halt_poll_ns 0: %+v", fs)
	}
	f := fs[0]
	for _, want := range []string{"haltpoll.guest_halt_poll_ns=200000", "replace haltpoll.guest_halt_poll_ns=0", "sap-hana-kvm-guest", "2400000", "[sysfs]"} {
		if !strings.Contains(f.Fix, want) {
			t.Errorf("fix lacks %q: %s", want, f.Fix)
		}
	}
	if !strings.Contains(f.Source, "guest-halt-polling.rst") || !strings.Contains(f.Source, "governors/haltpoll.c") || strings.Contains(f.Source, "DOMAIN") {
		t.Errorf("source %q", f.Source)
	}
	if fs, _ := hostFindings(t, fixtures+"kvm-guest-haltpoll-200000", "CPU-IDLE"); len(fs) != 0 {
		t.Errorf("guest_halt_poll_ns 200000: %+v", fs)
	}
}

// TestCPUIdleHaltpollTuned: on a guest at 0, tuned's latency-performance
// is named as no help (its 1 us is not the 0 the haltpoll governor needs),
// balanced is not named, and a profile whose force_latency is 0 keeps the
// vCPUs polling, so nothing is said.
func TestCPUIdleHaltpollTuned(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"kvm-guest-haltpoll-0", "CPU-IDLE")
	if !strings.Contains(fs[0].Message, "latency-performance does not help") || !strings.Contains(fs[0].Message, "1 us") ||
		!strings.Contains(fs[0].Message, "exactly 0") || !hasEvidence(fs[0], "force_latency") {
		t.Errorf("latency-performance: %s", fs[0].Message)
	}
	fs, _ = hostFindings(t, overlay(t, "kvm-guest-haltpoll-0", map[string]string{"/etc/tuned/active_profile": "balanced\n"}), "CPU-IDLE")
	if len(fs) != 1 || fs[0].Severity != Warning || strings.Contains(fs[0].Message, "does not help") || hasEvidence(fs[0], "force_latency") {
		t.Errorf("balanced: %+v", fs)
	}
	zero := overlay(t, "kvm-guest-haltpoll-0", map[string]string{"/etc/tuned/active_profile": "held\n",
		"/etc/tuned/held/tuned.conf": "[main]\ninclude=latency-performance\n[cpu]\nforce_latency=0\n"})
	if fs, _ = hostFindings(t, zero, "CPU-IDLE"); len(fs) != 0 {
		t.Errorf("force_latency 0: %+v", fs)
	}
}

// TestCPUIdleCStates: bare metal with C6 (133 us) enabled warns; with
// intel_idle.max_cstate=1 and the deep states disabled it does not; tuned
// latency-performance on the C6 machine turns the warning into an info
// (its PM QoS limit keeps the CPUs in C1 while tuned runs), balanced does
// not.
func TestCPUIdleCStates(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c6", "CPU-IDLE")
	if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "C6 (133 us)") || strings.Contains(fs[0].Message, "C1E") ||
		!strings.Contains(fs[0].Fix, "intel_idle.max_cstate=1") || !strings.Contains(fs[0].Fix, "latency-performance") {
		t.Fatalf("C6 enabled: %+v", fs)
	}
	if fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c1", "CPU-IDLE"); len(fs) != 0 {
		t.Errorf("max_cstate=1, deep states disabled: %+v", fs)
	}
	tuned := overlay(t, "ol8-baremetal-c6", map[string]string{"/etc/tuned/active_profile": "latency-performance\n"})
	fs, _ = hostFindings(t, tuned, "CPU-IDLE")
	if len(fs) != 1 || fs[0].Severity != Info || !strings.Contains(fs[0].Message, "PM QoS limit of 2 us") {
		t.Errorf("C6 with latency-performance: %+v", fs)
	}
	// A limit above C6's exit latency still allows it.
	loose := overlay(t, "ol8-baremetal-c6", map[string]string{"/etc/tuned/active_profile": "loose\n",
		"/etc/tuned/loose/tuned.conf": "[cpu]\nforce_latency=200\n"})
	if fs, _ = hostFindings(t, loose, "CPU-IDLE"); len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "still allows") {
		t.Errorf("force_latency 200: %+v", fs)
	}
	// acpi_idle is limited with processor.max_cstate.
	acpi := overlay(t, "ol8-baremetal-c6", map[string]string{"/sys/devices/system/cpu/cpuidle/current_driver": "acpi_idle\n"})
	if fs, _ = hostFindings(t, acpi, "CPU-IDLE"); len(fs) != 1 || !strings.Contains(fs[0].Fix, "processor.max_cstate=1") {
		t.Errorf("acpi_idle: %+v", fs)
	}
}

func TestResolveForceLatency(t *testing.T) {
	lat := func(v int64) *int64 { return &v }
	xeon := []inventory.IdleState{{Index: 0, Name: "POLL", LatencyUs: lat(0)}, {Index: 1, Name: "C1", LatencyUs: lat(2)}, {Index: 3, Name: "C6", LatencyUs: lat(133)}}
	guest := []inventory.IdleState{{Index: 0, Name: "POLL", LatencyUs: lat(0)}, {Index: 1, Name: "haltpoll idle", LatencyUs: lat(1)}}
	for _, c := range []struct {
		v      string
		states []inventory.IdleState
		want   int64
		ok     bool
	}{
		{"cstate.id_no_zero:1|3", xeon, 2, true},
		{"cstate.id_no_zero:1|3", guest, 1, true},
		{"cstate.id_no_zero:0|3", xeon, 3, true}, // POLL's 0 skipped
		{"cstate.id:0|3", xeon, 0, true},
		{"cstate.name:C6|10", xeon, 133, true},
		{"cstate.name:C3|10", xeon, 10, true},
		{"cstate.id_no_zero:1|3", nil, 3, true},
		{"0", nil, 0, true},
		{"n/a", xeon, 0, false},
		{"", xeon, 0, false},
	} {
		got, ok := ResolveForceLatency(c.v, c.states)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// TestCPUFreq: powersave warns, performance does not, ondemand is info.
func TestCPUFreq(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c6", "CPU-FREQ")
	if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "4 of 4 CPUs run the powersave governor") || !strings.Contains(fs[0].Fix, "latency-performance") {
		t.Errorf("powersave: %+v", fs)
	}
	if fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c1", "CPU-FREQ"); len(fs) != 0 {
		t.Errorf("performance: %+v", fs)
	}
	od := overlay(t, "ol8-baremetal-c1", map[string]string{"/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor": "ondemand\n"})
	if fs, _ := hostFindings(t, od, "CPU-FREQ"); len(fs) != 1 || fs[0].Severity != Info || !strings.Contains(fs[0].Message, "1 of 4") {
		t.Errorf("ondemand: %+v", fs)
	}
}

// TestCoalesce: rx-usecs 100 without adaptive-rx warns on the
// interconnect; 0, adaptive-rx, a driver without coalescing, or a NIC
// that is not the interconnect do not.
func TestCoalesce(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c6", "NET-IC-COALESCE")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "up to 100 us") || !strings.Contains(fs[0].Fix, "ethtool -C eth1 adaptive-rx on") ||
		fs[0].Evidence[0].File != "/interlink/ethtool/eth1/coalesce" {
		t.Errorf("rx-usecs 100: %+v", fs)
	}
	for name, root := range map[string]string{
		"rx-usecs 0":  fixtures + "ol8-baremetal-c1",
		"unsupported": fixtures + "kvm-guest-haltpoll-0",
		"adaptive":    overlay(t, "ol8-baremetal-c6", map[string]string{"/interlink/ethtool/eth1/coalesce": "adaptive-rx: on\nrx-usecs: 100\nrx-frames: 128\n"}),
	} {
		if fs, _ := hostFindings(t, root, "NET-IC-COALESCE"); len(fs) != 0 {
			t.Errorf("%s: %+v", name, fs)
		}
	}
	r := Check(gather(t, fixtures+"ol8-baremetal-c6", inventory.Options{}), Config{})
	for _, f := range r.Findings {
		if f.Rule == "NET-IC-COALESCE" || f.Rule == "NET-IC-IRQ" {
			t.Errorf("no interconnect known, yet %s fired", f.Rule)
		}
	}
}

// TestIRQAffinity: every queue's interrupts on CPU 0 warns; spread over
// the CPUs (and the guest's one input and one output queue) does not.
func TestIRQAffinity(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"ol8-baremetal-c6", "NET-IC-IRQ")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "all 5 queue interrupts of eth1 were taken by CPU 0") || len(fs[0].Evidence) != 6 {
		t.Errorf("all on CPU 0: %+v", fs)
	}
	for _, tree := range []string{"ol8-baremetal-c1", "kvm-guest-haltpoll-0"} {
		if fs, _ := hostFindings(t, fixtures+tree, "NET-IC-IRQ"); len(fs) != 0 {
			t.Errorf("%s: %+v", tree, fs)
		}
	}
}

// TestSteal: 13 % of the time with work stolen warns, 0.2 % does not;
// over an interval the interval's share is judged, not the total's.
func TestSteal(t *testing.T) {
	fs, _ := hostFindings(t, fixtures+"kvm-guest-haltpoll-0", "VM-STEAL")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "13.0 %") || !strings.Contains(fs[0].Message, "since boot") {
		t.Errorf("13 %%: %+v", fs)
	}
	if fs, _ := hostFindings(t, fixtures+"kvm-guest-haltpoll-200000", "VM-STEAL"); len(fs) != 0 {
		t.Errorf("0.2 %%: %+v", fs)
	}
	inv := &inventory.Inventory{Host: &inventory.Host{Steal: &inventory.Steal{
		Total:    inventory.CPUTimes{User: 1000, Steal: 500},
		Interval: &inventory.CPUTimes{User: 100, Steal: 1}, IntervalNs: 5e9, File: "/proc/stat"}}}
	if fs := checkSteal(inv, &Config{}); len(fs) != 0 {
		t.Errorf("1 %% over the interval, 33 %% since boot: %+v", fs)
	}
	inv.Host.Steal.Interval.Steal = 50
	if fs := checkSteal(inv, &Config{}); len(fs) != 1 || !strings.Contains(fs[0].Message, "over 5s") {
		t.Errorf("33 %% over the interval: %+v", fs)
	}
}
