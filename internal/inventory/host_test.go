package inventory

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/fixturetest"
)

func TestParseCmdline(t *testing.T) {
	got := ParseCmdline(strings.NewReader("BOOT_IMAGE=/vmlinuz ro intel_idle.max_cstate=2 idle=poll haltpoll.guest-halt-poll-ns=0 "+
		"intel_idle.max_cstate=1 cpuidle.off quiet -- intel_idle.max_cstate=9\n"), CmdlineKeys)
	want := map[string]string{"intel_idle.max_cstate": "1", "idle": "poll", "haltpoll.guest_halt_poll_ns": "0", "cpuidle.off": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseStat(t *testing.T) {
	got, err := ParseStat(strings.NewReader("cpu  100 2 30 4000 5 6 7 80 9 0\ncpu0 1 1 1 1 1 1 1 1 1 1\n"))
	if err != nil || got != (CPUTimes{100, 2, 30, 4000, 5, 6, 7, 80}) || got.Busy() != 145 {
		t.Errorf("%+v %v", got, err)
	}
	if _, err := ParseStat(strings.NewReader("cpu  1 2 3 4 5 6 7\n")); err != ErrNoSteal {
		t.Errorf("a cpu line without steal: %v", err)
	}
	if _, err := ParseStat(strings.NewReader("intr 5\n")); err == nil {
		t.Error("no cpu line: no error")
	}
	if d := (CPUTimes{User: 5, Steal: 3}).Sub(CPUTimes{User: 7, Steal: 1}); d.User != 0 || d.Steal != 2 {
		t.Errorf("Sub: %+v", d)
	}
}

func TestParseTunedConf(t *testing.T) {
	c := ParseTunedConf(strings.NewReader("[main]\ninclude=throughput-performance\n[cpu]\n# force_latency=9\nforce_latency = cstate.id_no_zero:1|3\ngovernor=performance\n[sysctl]\nforce_latency=5\n"))
	if c.ForceLatency != "cstate.id_no_zero:1|3" || !c.HasLatency || c.Governor != "performance" || strings.Join(c.Include, ",") != "throughput-performance" {
		t.Errorf("%+v", c)
	}
}

func TestParseInterrupts(t *testing.T) {
	in := "           CPU0       CPU1\n  38:          0       6532  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n" +
		" 39:       4463          0  PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\nNMI:  0 0  Non-maskable interrupts\nERR:  0\n"
	m, cpus, err := ParseInterrupts(strings.NewReader(in))
	if err != nil || cpus != 2 || len(m) != 2 || m[38].Name != "virtio2-input.0" || !reflect.DeepEqual(m[39].Counts, []int64{4463, 0}) {
		t.Errorf("%v %d %+v", err, cpus, m)
	}
}

func TestCoalesceFileRoundTrip(t *testing.T) {
	c := &Coalesce{RxUsecs: 100, RxFrames: 128, AdaptiveRx: true, TxUsecs: 16, TxFrames: 32}
	got, note, err := ParseCoalesce(bytes.NewReader(FormatCoalesce(c, "")))
	if err != nil || note != "" || *got != *c {
		t.Errorf("%+v %q %v", got, note, err)
	}
	got, note, err = ParseCoalesce(bytes.NewReader(FormatCoalesce(nil, "ETHTOOL_GCOALESCE: operation not supported")))
	if err != nil || got != nil || note != "ETHTOOL_GCOALESCE: operation not supported" {
		t.Errorf("refusal: %+v %q %v", got, note, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "rx-usecs: lots\n", "rx-usecs 5\n"} {
		if c, _, err := ParseCoalesce(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: %+v, no error", bad, c)
		}
	}
}

// TestGatherHostGuest reads the host section of a KVM guest tree: the
// haltpoll driver and parameters, the command line, tuned through its
// include, steal, and the virtio NIC's coalescing (refused) and queues.
func TestGatherHostGuest(t *testing.T) {
	inv, _ := gatherFixture(t, fixtures+"kvm-guest-haltpoll-0")
	h := inv.Host
	if h == nil || h.Idle == nil || h.Haltpoll == nil || h.Cmdline == nil || h.Tuned == nil || h.Steal == nil {
		t.Fatalf("host %+v", h)
	}
	if h.Idle.Driver != "haltpoll" || h.Idle.Governor != "haltpoll" || h.Idle.CPUs != 2 || len(h.Idle.States) != 2 ||
		h.Idle.States[1].Name != "haltpoll idle" || *h.Idle.States[1].LatencyUs != 1 || h.Idle.States[1].Enabled != 2 {
		t.Errorf("cpuidle %+v", h.Idle)
	}
	if *h.Haltpoll.PollNs != 0 || h.Haltpoll.Params["guest_halt_poll_grow_start"] != "50000" || h.Cmdline.Params["haltpoll.guest_halt_poll_ns"] != "0" {
		t.Errorf("haltpoll %+v, cmdline %+v", h.Haltpoll, h.Cmdline)
	}
	if h.Tuned.Profile != "latency-performance" || h.Tuned.ForceLatency != "cstate.id_no_zero:1|3" || h.Tuned.Governor != "performance" {
		t.Errorf("tuned %+v", h.Tuned)
	}
	if h.Freq != nil || h.Steal.Total.Steal != 78000 || h.Steal.Interval != nil {
		t.Errorf("cpufreq %+v (a guest without one), steal %+v", h.Freq, h.Steal)
	}
	if len(h.NICs) != 1 || h.NICs[0].Coalesce != nil || !strings.Contains(h.NICs[0].CoalesceNote, "not supported") {
		t.Fatalf("nics %+v", h.NICs)
	}
	var names []string
	for _, irq := range h.NICs[0].IRQs {
		names = append(names, irq.Name+"@"+irq.Affinity)
	}
	if strings.Join(names, " ") != "virtio3-input.0@1 virtio3-output.0@0" {
		t.Errorf("irqs %v (the config vector is left out)", names)
	}
	if sec := inv.Sections[len(inv.Sections)-1]; sec.Name != "host" || sec.Status != "ok" {
		t.Errorf("last section %+v", sec)
	}
}

// TestGatherHostTunedInclude: a profile that sets no force_latency takes
// its included profile's, and its own value overrides the included one.
func TestGatherHostTunedInclude(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"kvm-guest-haltpoll-200000", dir)
	fixturetest.Write(t, dir, "/etc/tuned/active_profile", "my-guest\n")
	fixturetest.Write(t, dir, "/etc/tuned/my-guest/tuned.conf", "[main]\ninclude=latency-performance\n")
	inv, _ := gatherFixture(t, dir)
	if tu := inv.Host.Tuned; tu.ForceLatency != "cstate.id_no_zero:1|3" || len(tu.ProfileFiles) != 2 {
		t.Errorf("include not followed: %+v", tu)
	}
	fixturetest.Write(t, dir, "/etc/tuned/my-guest/tuned.conf", "[main]\ninclude=latency-performance\n[cpu]\nforce_latency=0\n")
	inv, _ = gatherFixture(t, dir)
	if tu := inv.Host.Tuned; tu.ForceLatency != "0" || tu.ForceLatencyFile != "/etc/tuned/my-guest/tuned.conf" {
		t.Errorf("own value does not override: %+v", tu)
	}
	fixturetest.Write(t, dir, "/etc/tuned/my-guest/tuned.conf", "[main]\ninclude=my-guest\n") // a loop ends
	if inv, _ = gatherFixture(t, dir); inv.Host.Tuned.ForceLatency != "" {
		t.Errorf("loop: %+v", inv.Host.Tuned)
	}
}

// TestGatherHostBareMetal: per-CPU disable files are counted, cpufreq is
// read, and the coalescing file of a captured tree is used.
func TestGatherHostBareMetal(t *testing.T) {
	inv, _ := gatherFixture(t, fixtures+"ol8-baremetal-c1")
	h := inv.Host
	if c6 := h.Idle.States[3]; c6.Name != "C6" || *c6.LatencyUs != 133 || c6.Enabled != 0 || c6.Disabled != 4 {
		t.Errorf("C6 %+v", c6)
	}
	if h.Freq == nil || h.Freq.Governors["performance"] != 4 || h.Freq.Driver != "intel_pstate" {
		t.Errorf("cpufreq %+v", h.Freq)
	}
	if c := h.NICs[0].Coalesce; c == nil || c.RxUsecs != 0 || c.AdaptiveRx || h.NICs[0].CoalesceFile != "/interlink/ethtool/eth1/coalesce" {
		t.Errorf("coalesce %+v", h.NICs[0])
	}
	if len(h.NICs[0].IRQs) != 5 || h.NICs[0].IRQs[2].Affinity != "1" {
		t.Errorf("irqs %+v", h.NICs[0].IRQs)
	}
}

// TestGatherHostAbsent: a tree without any of the host's files has no
// host section (the Solaris tree, the older fixtures).
func TestGatherHostAbsent(t *testing.T) {
	inv, _ := gatherFixture(t, fixtures+"solaris-nfs")
	if inv.Host != nil {
		t.Errorf("host %+v", inv.Host)
	}
	for _, s := range inv.Sections {
		if s.Name == "host" {
			t.Errorf("section %+v", s)
		}
	}
}

// TestStealOverInterval: with a counter interval, steal is read again
// after it and judged as the difference.
func TestStealOverInterval(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	fixturetest.Write(t, dir, "/proc/stat", "cpu  100 0 100 1000 0 0 0 10 0 0\n")
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	wait := func(ctx context.Context, d time.Duration) error {
		return os.WriteFile(filepath.Join(dir, "proc/stat"), []byte("cpu  150 0 150 1100 0 0 0 60 0 0\n"), 0o644)
	}
	inv, err := Gather(context.Background(), src, Options{CounterInterval: 5 * time.Second, Now: fixedNow, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	s := inv.Host.Steal
	if s.Interval == nil || s.Interval.Steal != 50 || s.Interval.Busy() != 100 || s.Total.Steal != 60 || s.IntervalNs != 5*time.Second {
		t.Errorf("steal %+v interval %+v", s, s.Interval)
	}
}
