package cli

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

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
