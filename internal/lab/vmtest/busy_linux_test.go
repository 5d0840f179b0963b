//go:build linux

package vmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// holdChannel runs `lab exec NAME NODE -- sh -c 'echo held; exec sleep
// 60'` as a person would, and returns once the command runs in the guest
// (it said "held"), holding the node's command channel. The returned
// function ends it (SIGTERM to lab exec, which passes it to the command)
// and waits for lab exec to exit, 10 s at most.
func holdChannel(ctx context.Context, t *testing.T, name, node string) func() {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, "lab", "exec", name, node, "--", "sh", "-c", "echo held; exec sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	held := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		held <- line == "held\n"
		exited <- cmd.Wait()
	}()
	release := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(2 * time.Minute): // only against a hang
			cmd.Process.Kill()
			t.Errorf("lab exec %s never ended after SIGTERM", node)
		}
	}
	select {
	case ok := <-held:
		if !ok {
			release()
			t.Fatalf("lab exec %s -- sh -c 'echo held; ...': %s", node, stderr.String())
		}
	case <-time.After(2 * time.Minute): // only against a hang
		release()
		t.Fatalf("lab exec %s: the command never started", node)
	}
	return release
}

// checkStatusWhileBusy: while a lab exec command (sleep) holds VM node's
// command channel, lab status asks its guest on the status channel and
// finds its services running with their PIDs (a guest held this way used
// to be reported unknown, "guest not answering within 3s", as a hung one
// is).
func checkStatusWhileBusy(ctx context.Context, t *testing.T, name, node string) {
	t.Helper()
	release := holdChannel(ctx, t, name, node)
	defer release()
	start := time.Now()
	s, _, code := labStatus(ctx, t, name, true)
	took := time.Since(start)
	t.Logf("lab status while lab exec holds %s's command channel: %s", node, took.Round(time.Millisecond))
	for _, n := range s.Nodes {
		for _, sv := range n.Services {
			if n.Name == node && (sv.State != lab.ServiceRunning || sv.PID == 0) {
				t.Errorf("%s's %s with its command channel held: %s, pid %d, %q; want running with its PID in the guest", node, sv.Kind, sv.State, sv.PID, sv.Reason)
			}
		}
	}
	if code != 0 || s.State != lab.StateUp {
		t.Errorf("lab status with %s's command channel held: exit %d, %s, %q; want 0, up", node, code, s.State, s.Problems)
	}
}

// checkOlderLab: a lab whose state names no status channel (as one
// brought up by an older interlink) is asked on the command channel: its
// services are running when nothing holds it, and unknown when a lab exec
// command does, saying that a command may hold it. The state is put back
// afterwards.
func checkOlderLab(ctx context.Context, t *testing.T, name, node string) {
	t.Helper()
	path := filepath.Join(stateDir(), name+".json")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(orig, &st); err != nil {
		t.Fatal(err)
	}
	vms, _ := st["vms"].([]any)
	for _, v := range vms {
		if m, ok := v.(map[string]any); !ok || m["status"] == nil {
			t.Fatalf("the lab's state names no status channel for a VM: %v", v)
		} else {
			delete(m, "status")
		}
	}
	old, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	writeState(t, path, old)
	defer writeState(t, path, orig)
	s, _, code := labStatus(ctx, t, name, true)
	if sv := service(s, node, "agent"); code != 0 || sv.State != lab.ServiceRunning {
		t.Errorf("an older lab, asked on the command channel: exit %d, %s's agent %s (%s)", code, node, sv.State, sv.Reason)
	}
	release := holdChannel(ctx, t, name, node)
	defer release()
	start := time.Now()
	s, _, code = labStatus(ctx, t, name, true)
	took := time.Since(start)
	t.Logf("lab status of an older lab while lab exec holds %s's command channel: %s", node, took.Round(time.Millisecond))
	why := fmt.Sprintf("guest not answering within %s on its command channel, which a lab exec command may hold (no status channel: the lab was brought up by an older interlink, or the guest's kernel has no ttyS2)", lab.GuestTimeout)
	if sv := service(s, node, "agent"); sv.State != lab.ServiceUnknown || sv.Reason != why {
		t.Errorf("an older lab, its command channel held: %s's agent %s, %q; want %s, %q", node, sv.State, sv.Reason, lab.ServiceUnknown, why)
	}
	if code != 1 {
		t.Errorf("an older lab, its command channel held: exit %d in %s; want 1", code, took)
	}
}

// writeState replaces a lab's state file as the lab does (a temporary
// file renamed over it), so that a reader never sees half of it.
func writeState(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".vmtest"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		t.Fatal(err)
	}
}
