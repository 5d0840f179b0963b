//go:build linux

package vmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// labStatus runs `interlink lab status NAME` as people do, with --json
// when asJSON, and returns the lab's status (JSON only), the text and the
// exit code.
func labStatus(ctx context.Context, t *testing.T, name string, asJSON bool) (*lab.Status, string, int) {
	t.Helper()
	args := []string{"lab", "status", name}
	if asJSON {
		args = append(args, "--json")
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("lab status: %v", err)
	}
	if code > 1 {
		t.Fatalf("lab status %s: exit %d: %s", name, code, stderr.String())
	}
	if !asJSON {
		return nil, string(out), code
	}
	var doc lab.Doc
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab status --json: %v\n%s", err, out)
	}
	return doc.Labs[0], string(out), code
}

// service is node's service kind in s (the zero status when absent).
func service(s *lab.Status, node, kind string) lab.ServiceStatus {
	for _, n := range s.Nodes {
		for _, sv := range n.Services {
			if n.Name == node && sv.Kind == kind {
				return sv
			}
		}
	}
	return lab.ServiceStatus{}
}

// killInGuest kills a VM node's service by the PID lab status gives for it
// (its PID in the guest), with lab exec as a person would, and returns
// that PID; then waits (5 s at most) until lab status says the process
// has exited, and returns that status with its exit code. (sshd closes its
// listener before it exits: between the two, status rightly says that it
// lives but takes no connection.)
func killInGuest(ctx context.Context, t *testing.T, name, node, kind string) (int, *lab.Status, int) {
	t.Helper()
	s, _, _ := labStatus(ctx, t, name, true)
	sv := service(s, node, kind)
	if sv.State != lab.ServiceRunning || sv.PID == 0 {
		t.Fatalf("before the kill: %s's %s is %s, pid %d, want running with its PID in the guest", node, kind, sv.State, sv.PID)
	}
	out, err := exec.CommandContext(ctx, binary, "lab", "exec", name, node, "--", "kill", strconv.Itoa(sv.PID)).CombinedOutput()
	if err != nil {
		t.Fatalf("lab exec %s -- kill %d: %v: %s", node, sv.PID, err, out)
	}
	deadline := time.Now().Add(60 * time.Second) // only against a hang
	for {
		s, _, code := labStatus(ctx, t, name, true)
		if strings.HasSuffix(service(s, node, kind).Reason, " has exited") || time.Now().After(deadline) {
			return sv.PID, s, code
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wantProblem fails the test unless s lists problem.
func wantProblem(t *testing.T, s *lab.Status, problem string) {
	t.Helper()
	for _, p := range s.Problems {
		if p == problem {
			return
		}
	}
	t.Errorf("lab status problems %q, want %q among them", s.Problems, problem)
}

// checkSSHDKilled: lab status asks the guests, so every VM service runs
// with its PID in the guest; node3's sshd killed in the guest (its qemu
// running on) is stopped, with the reason, as a namespace node's dead
// service is: the lab damaged, exit 1, and nothing else flagged.
func checkSSHDKilled(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	start := time.Now()
	s, _, code := labStatus(ctx, t, name, true)
	t.Logf("lab status, three guests asked: %s", time.Since(start).Round(time.Millisecond))
	for _, n := range s.Nodes {
		for _, sv := range n.Services {
			if sv.State != lab.ServiceRunning || sv.PID == 0 {
				t.Errorf("node %s %s: %s, pid %d, reason %q: want running, its PID in the guest", n.Name, sv.Kind, sv.State, sv.PID, sv.Reason)
			}
		}
	}
	if code != 0 || s.State != lab.StateUp {
		t.Fatalf("lab status before the kill: exit %d, %s, %q", code, s.State, s.Problems)
	}
	pid, s, code := killInGuest(ctx, t, name, "node3", "sshd")
	sv := service(s, "node3", "sshd")
	why := fmt.Sprintf("process %d in the guest has exited", pid)
	if sv.State != lab.ServiceStopped || sv.Reason != why || sv.PID != 0 {
		t.Errorf("node3 sshd after kill %d in the guest: %s, reason %q, pid %d; want stopped, %q", pid, sv.State, sv.Reason, sv.PID, why)
	}
	if code != 1 || s.State != lab.StateDamaged || len(s.Problems) != 1 {
		t.Errorf("lab status after the kill: exit %d, %s, %q; want exit 1, damaged, one problem", code, s.State, s.Problems)
	}
	wantProblem(t, s, "node node3: service sshd is stopped: "+why)
	if sv := service(s, "node3", "agent"); sv.State != lab.ServiceRunning {
		t.Errorf("node3's agent, not killed: %s (%s)", sv.State, sv.Reason)
	}
	_, text, code := labStatus(ctx, t, name, false)
	if code != 1 || !strings.Contains(text, "  problem: node node3: service sshd is stopped: "+why+"\n") {
		t.Errorf("lab status (text) after the kill: exit %d:\n%s", code, text)
	}
}

// checkGuestSilent: with VM node a's qemu stopped (SIGSTOP), its guest
// cannot answer: lab status says so for a's agent after lab.GuestTimeout,
// not "running", and flags it as a problem (exit 1); b's agent, in a
// namespace, still runs. qemu is continued afterwards, and the next status
// finds the guest's agent running again.
func checkGuestSilent(ctx context.Context, t *testing.T, name string, qemu int) {
	t.Helper()
	if err := syscall.Kill(qemu, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	cont := func() {
		if !continued {
			syscall.Kill(qemu, syscall.SIGCONT)
			continued = true
		}
	}
	defer cont()
	start := time.Now()
	s, _, code := labStatus(ctx, t, name, true)
	took := time.Since(start)
	cont()
	t.Logf("lab status with the guest stopped: %s", took.Round(time.Millisecond))
	why := fmt.Sprintf("guest not answering within %s", lab.GuestTimeout)
	if sv := service(s, "a", "agent"); sv.State != lab.ServiceUnknown || sv.Reason != why || sv.PID != 0 {
		t.Errorf("a's agent with its guest stopped: %s, reason %q, pid %d; want %s, %q", sv.State, sv.Reason, sv.PID, lab.ServiceUnknown, why)
	}
	if sv := service(s, "b", "agent"); sv.State != lab.ServiceRunning {
		t.Errorf("b's agent (a namespace node): %s", sv.State)
	}
	if code != 1 || s.State != lab.StateDamaged {
		t.Errorf("lab status with a's guest stopped: exit %d, %s; want 1, damaged", code, s.State)
	}
	wantProblem(t, s, "node a: service agent is unknown: "+why) // the reason is the timeout's
	// The request status sent while qemu was stopped reached the guest
	// cut short (qemu drops what it had not read from a caller gone):
	// the next caller's request must still be answered, at once.
	start = time.Now()
	s, _, code = labStatus(ctx, t, name, true)
	if sv := service(s, "a", "agent"); code != 0 || sv.State != lab.ServiceRunning {
		t.Errorf("the first status after SIGCONT: exit %d, a's agent %s (%s), problems %q", code, sv.State, sv.Reason, s.Problems)
	}
	t.Logf("the first status after SIGCONT: %s", time.Since(start).Round(time.Millisecond))
}

// checkAgentsKilled kills the agent of VM node a (in its guest, with lab
// exec) and of namespace node b (here, by its PID): lab status reports
// both through the one check, stopped, and exits 1.
func checkAgentsKilled(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	pid, _, _ := killInGuest(ctx, t, name, "a", "agent")
	s, _, _ := labStatus(ctx, t, name, true)
	b := service(s, "b", "agent")
	if b.State != lab.ServiceRunning || b.PID == 0 {
		t.Fatalf("b's agent: %s, pid %d", b.State, b.PID)
	}
	syscall.Kill(b.PID, syscall.SIGTERM)
	for i := 0; i < 3000 && running(b.PID); i++ { // 60 s, only against a hang
		time.Sleep(20 * time.Millisecond)
	}
	s, text, code := labStatus(ctx, t, name, true)
	wantProblem(t, s, fmt.Sprintf("node a: service agent is stopped: process %d in the guest has exited", pid))
	wantProblem(t, s, "node b: service agent is stopped")
	if code != 1 || s.State != lab.StateDamaged || len(s.Problems) != 2 {
		t.Errorf("lab status with both agents killed: exit %d, %s, %q; want exit 1, damaged, the two\n%s", code, s.State, s.Problems, text)
	}
}
