package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"golang.org/x/sys/unix"
)

// These tests act as kernels older than this one through the seams in
// ns_linux.go (pidfdOpen) and port_linux.go (portProbe).

// noPidfd makes pidfd_open fail as on kernels before 5.3.
func noPidfd(t *testing.T) {
	old := pidfdOpen
	pidfdOpen = func(int, int) (int, error) { return -1, unix.ENOSYS }
	t.Cleanup(func() { pidfdOpen = old })
}

// startSleeper starts `sleep 30` and kills it by PID when the test ends.
func startSleeper(t *testing.T, start func(*exec.Cmd) error) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// killedBySIGKILL waits for cmd (reaping it) and fails unless it ended by
// the SIGKILL the test sent: an early reaper would leave Wait an error.
func killedBySIGKILL(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v, want the exit status of a killed process", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", ee)
	}
}

// TestWaitExitWithoutPidfd: waitExit blocks while the child runs and
// returns once it exits, without reaping it, with pidfd_open and without.
func TestWaitExitWithoutPidfd(t *testing.T) {
	for _, name := range []string{"pidfd", "ENOSYS"} {
		t.Run(name, func(t *testing.T) {
			if name == "ENOSYS" {
				noPidfd(t)
			}
			cmd := startSleeper(t, (*exec.Cmd).Start)
			done := make(chan struct{})
			go func() { waitExit(cmd.Process.Pid); close(done) }()
			select {
			case <-done:
				t.Fatal("waitExit returned while the child runs")
			case <-time.After(300 * time.Millisecond):
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(60 * time.Second): // only against a hang
				t.Fatal("waitExit never returned after the child's exit")
			}
			killedBySIGKILL(t, cmd)
		})
	}
	// A child already reaped: waitExit returns at once either way.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { waitExitNoPidfd(cmd.Process.Pid); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("waitExitNoPidfd blocked on a reaped child")
	}
}

// testLab brings up a built-in under a name of this package's tests and
// removes it when the test ends (labuptest.Up does the same for other
// packages, but it imports this one).
func testLab(t *testing.T, builtin, name string) *Lab {
	t.Helper()
	if err := CheckPrivilege(); err != nil {
		t.Fatalf("lab tests build network namespaces and need root: %v", err)
	}
	topo, err := Load(builtin)
	if err != nil {
		t.Fatal(err)
	}
	topo.Name = name
	Down(name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := Up(ctx, topo)
	if err != nil {
		t.Fatalf("lab up %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := Down(name); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("lab down %s: %v", name, err)
		}
	})
	return l
}

// TestStartWithoutPidfd: on a kernel without pidfd_open a process started
// in a lab node with a parent-death signal keeps running (it was killed at
// once before), runs in the node's namespace, and is reaped by its owner.
func TestStartWithoutPidfd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a lab")
	}
	noPidfd(t)
	l := testLab(t, "jumbo", "tk-pidfd")
	n, err := l.Node("node1")
	if err != nil {
		t.Fatal(err)
	}
	cmd := startSleeper(t, n.Start)
	time.Sleep(500 * time.Millisecond)
	if err := unix.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the node's process is gone after 0.5s: %v", err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(stat)); len(f) < 3 || f[2] == "Z" {
		t.Fatalf("the node's process has exited: %s", stat)
	}
	var nsFile, procNS unix.Stat_t
	if err := unix.Stat(nsPath(nodeNS("tk-pidfd", "node1")), &nsFile); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid), &procNS); err != nil {
		t.Fatal(err)
	}
	if nsFile.Ino != procNS.Ino {
		t.Fatalf("the process runs in namespace inode %d, the node's is %d", procNS.Ino, nsFile.Ino)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedBySIGKILL(t, cmd)
}

// noPortClassifier makes the classifier's probe fail as the verifier of a
// kernel before 5.7 does (no __sk_buff.gso_size: EACCES and a log).
func noPortClassifier(t *testing.T) {
	old := portProbe
	portProbe = func() error {
		return fmt.Errorf("load port-MTU classifier: %w (%s)", unix.EACCES,
			"0: (bf) r6 = r1\n1: (61) r7 = *(u32 *)(r6 +0)\n2: (61) r8 = *(u32 *)(r6 +176)\ninvalid bpf_context access off=176 size=4")
	}
	t.Cleanup(func() { portProbe = old })
}

// TestPortClassifierProbe: this machine's kernel loads the classifier
// (the real probe, not the seam).
func TestPortClassifierProbe(t *testing.T) {
	roottest.Require(t, "it loads a BPF program")
	if err := portProbe(); err != nil {
		t.Fatalf("the classifier does not load here: %v", err)
	}
}

// TestUpRefusesPortMTUWithoutBPF: on a kernel that cannot load the port
// classifier, lab up of a topology with port_mtu refuses in one line that
// names the facility, the kernel it needs and what to do, and builds
// nothing; a topology without port_mtu is not refused; lab set port_mtu=
// on a running lab is refused the same way and changes nothing.
func TestUpRefusesPortMTUWithoutBPF(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a lab")
	}
	if err := CheckPrivilege(); err != nil {
		t.Fatalf("lab tests build network namespaces and need root: %v", err)
	}
	noPortClassifier(t)
	topo, err := Load("blackhole")
	if err != nil {
		t.Fatal(err)
	}
	const name = "tk-bpf"
	topo.Name = name
	Down(name)
	_, err = Up(context.Background(), topo)
	if err == nil {
		Down(name)
		t.Fatal("lab up of a port_mtu topology succeeded without the classifier")
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"lab tk-bpf", "node node2 link eth1 (port_mtu 1500, mtu 9000)", "__sk_buff.gso_size",
		"Linux 5.7 or newer", "this kernel is ", "permission denied", "no port_mtu"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "bpf_context") {
		t.Errorf("refusal is not one line (or carries the verifier's log): %q", msg)
	}
	for _, ns := range []string{switchNS(name), nodeNS(name, "node1"), nodeNS(name, "node2")} {
		if nsExists(ns) {
			t.Errorf("namespace %s exists after the refusal", ns)
		}
	}
	for _, p := range []string{statePath(name), lockPath(name), labDir(name)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is there after the refusal (%v)", p, err)
		}
	}

	// Without port_mtu there is nothing to refuse; set port_mtu= is refused.
	l := testLab(t, "jumbo", "tk-bpfset")
	before, err := Inspect(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	settings, err := ParseSettings("node2:eth1", []string{"port_mtu=1500"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Set(l.Name(), settings); err == nil || !strings.Contains(err.Error(), "Linux 5.7 or newer") {
		t.Fatalf("lab set port_mtu=1500 without the classifier: %v", err)
	}
	after, err := Inspect(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if string(b1) != string(b2) {
		t.Errorf("the refused set changed the lab:\nbefore %s\nafter  %s", b1, b2)
	}
}
