package lab

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/vm"
	"github.com/interlink/interlink/internal/vm/channel"
)

// TestVMServiceStatus: what the guest answers (or that it does not) gives
// the service's state, reason and PID; a VM whose qemu is not running is
// not asked. The "qemu" is a real process with the VM's directory on its
// command line, as vmAlive wants.
func TestVMServiceStatus(t *testing.T) {
	dir := t.TempDir()
	qemu := exec.Command("sh", "-c", "sleep 60", dir)
	if err := qemu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qemu.Process.Kill(); qemu.Wait() })
	n := NodeSpec{Name: "n1", VM: &VMSpec{}}
	st := &state{Name: "t", VMs: []vmState{{Node: "n1", Dir: dir, PID: qemu.Process.Pid}}}
	ss := ServiceStatus{Kind: KindSSHD, State: ServiceNotStarted}
	answer := func(a channel.ServiceAnswer) *guestAnswer {
		return &guestAnswer{byKind: map[string]channel.ServiceAnswer{a.Kind: a}}
	}
	refused := "dial tcp 198.18.99.1:22: connect: connection refused"
	for _, c := range []struct {
		name   string
		g      *guestAnswer
		state  string
		reason string
		pid    int
	}{
		{"running", answer(channel.ServiceAnswer{Kind: KindSSHD, PID: 90, Alive: true, Listening: true}), ServiceRunning, "", 90},
		{"exited", answer(channel.ServiceAnswer{Kind: KindSSHD, PID: 90}), ServiceStopped, "process 90 in the guest has exited", 0},
		{"not listening", answer(channel.ServiceAnswer{Kind: KindSSHD, PID: 90, Alive: true, Error: refused}), ServiceStopped,
			"process 90 lives in the guest but takes no connection (" + refused + ")", 90},
		{"not started", answer(channel.ServiceAnswer{Kind: KindSSHD, Error: "the guest did not start sshd"}), ServiceStopped, "the guest did not start sshd", 0},
		{"no answer for it", answer(channel.ServiceAnswer{Kind: KindAgent, PID: 1, Alive: true, Listening: true}), ServiceStopped, "the guest did not answer for sshd", 0},
		{"silent", &guestAnswer{err: fmt.Errorf("vm channel x: %w", vm.ErrNotAnswering)}, ServiceUnknown, fmt.Sprintf("guest not answering within %s", GuestTimeout), 0},
		{"silent on its command channel", &guestAnswer{err: fmt.Errorf("vm channel x: %w", vm.ErrNotAnswering), onChannel: true}, ServiceUnknown,
			fmt.Sprintf("guest not answering within %s on its command channel, which a lab exec command may hold (no status channel: the lab was brought up by an older interlink, or the guest's kernel has no ttyS2)", GuestTimeout), 0},
		{"running, asked on its command channel", &guestAnswer{byKind: map[string]channel.ServiceAnswer{KindSSHD: {Kind: KindSSHD, PID: 90, Alive: true, Listening: true}}, onChannel: true},
			ServiceRunning, "", 90},
		{"channel error", &guestAnswer{err: errors.New("vm channel x: closed before the guest answered")}, ServiceUnknown,
			"guest not answering: vm channel x: closed before the guest answered", 0},
	} {
		got := vmServiceStatus(st, &n, ss, c.g)
		if got.State != c.state || got.Reason != c.reason || got.PID != c.pid {
			t.Errorf("%s: %s, %q, pid %d; want %s, %q, pid %d", c.name, got.State, got.Reason, got.PID, c.state, c.reason, c.pid)
		}
	}
	qemu.Process.Kill()
	qemu.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for st.vmRunning("n1") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := vmServiceStatus(st, &n, ss, nil); got.State != ServiceStopped || got.Reason != "its VM is not running" {
		t.Errorf("qemu gone: %s, %q", got.State, got.Reason)
	}
	if got := vmServiceStatus(&state{Name: "t"}, &n, ss, nil); got.State != ServiceNotStarted || got.Reason != "" {
		t.Errorf("no qemu recorded: %s, %q", got.State, got.Reason)
	}
}
