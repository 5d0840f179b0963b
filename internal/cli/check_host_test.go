package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/rules"
)

// TestCheckLiveHaltpoll: on a KVM guest whose haltpoll governor does not
// poll (this machine kind: guest_halt_poll_ns 0), a live check warns with
// CPU-IDLE and names guest_halt_poll_ns; where it polls, there is no such
// warning. The value is read, never changed: other tests measure with it.
func TestCheckLiveHaltpoll(t *testing.T) {
	drv, err := os.ReadFile("/sys/devices/system/cpu/cpuidle/current_driver")
	if err != nil || strings.TrimSpace(string(drv)) != "haltpoll" {
		t.Skipf("the cpuidle driver here is not haltpoll (%q, %v): not a KVM guest with guest halt polling", strings.TrimSpace(string(drv)), err)
	}
	b, err := os.ReadFile("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
	if err != nil {
		t.Skipf("no haltpoll governor parameters here: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("guest_halt_poll_ns %q: %v", b, err)
	}
	out, errOut, code := run(t, "check", "--json")
	if code == ExitUnknown {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r rules.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var idle []rules.Finding
	for _, f := range r.Findings {
		if f.Rule == "CPU-IDLE" {
			idle = append(idle, f)
		}
	}
	if ns > 0 {
		if len(idle) != 0 {
			t.Errorf("guest_halt_poll_ns %d (polling), yet: %+v", ns, idle)
		}
		return
	}
	if len(idle) != 1 || idle[0].Severity != rules.Warning || !strings.Contains(idle[0].Message, "guest_halt_poll_ns") ||
		idle[0].Evidence[0].File != "/sys/module/haltpoll/parameters/guest_halt_poll_ns" || code < ExitWarning {
		t.Errorf("guest_halt_poll_ns 0: exit %d, CPU-IDLE %+v", code, idle)
	}
	text, _, _ := run(t, "check")
	if !strings.Contains(text, "CPU-IDLE") || !strings.Contains(text, "guest_halt_poll_ns") {
		t.Errorf("the text report does not name it:\n%s", text)
	}
}

// TestCheckLiveHaltpollPolling: the live check of a guest that polls
// (guest_halt_poll_ns 200000) gives no CPU-IDLE warning. The knob is not
// changed for anyone: in a mount namespace of its own the check sees a
// file holding 200000 bound over the parameter, and reads it as it reads
// the kernel's.
func TestCheckLiveHaltpollPolling(t *testing.T) {
	const knob = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
	drv, err := os.ReadFile("/sys/devices/system/cpu/cpuidle/current_driver")
	if err != nil || strings.TrimSpace(string(drv)) != "haltpoll" {
		t.Skipf("the cpuidle driver here is not haltpoll (%q, %v)", strings.TrimSpace(string(drv)), err)
	}
	before, err := os.ReadFile(knob)
	if err != nil {
		t.Skipf("no haltpoll governor parameters here: %v", err)
	}
	roottest.Require(t, "a bind mount in a mount namespace of its own")
	labuptest.SkipShort(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) is needed: apt-get install util-linux: %v", err)
	}
	bin, cleanup, err := bintest.Build("interlink-check-haltpoll-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	polling := filepath.Join(t.TempDir(), "guest_halt_poll_ns")
	if err := os.WriteFile(polling, []byte("200000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$1" "$2" && exec "$3" check --json`, "sh", polling, knob, bin)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() <= ExitCritical {
		err = nil
	}
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var r rules.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if h := r.Inventory.Host; h == nil || h.Haltpoll == nil || h.Haltpoll.PollNs == nil || *h.Haltpoll.PollNs != 200000 {
		t.Fatalf("the bound file was not read as the knob: %+v", r.Inventory.Host)
	}
	for _, f := range r.Findings {
		if f.Rule == "CPU-IDLE" {
			t.Errorf("guest_halt_poll_ns 200000, yet: %+v", f)
		}
	}
	if after, _ := os.ReadFile(knob); string(after) != string(before) {
		t.Errorf("the knob changed: %q, was %q", after, before)
	}
}
