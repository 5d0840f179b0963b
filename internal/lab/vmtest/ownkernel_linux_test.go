//go:build linux

package vmtest

import (
	"context"
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

// TestVMOwnKernel: `lab up --kernel FILE --modules DIR` boots a kernel
// given as files (here the cached Debian image and its virtio modules,
// compressed with xz as Oracle Linux ships them), in a lab where a VM node
// and a namespace node share a switch: the namespace node proves the path
// to the VM's agent at 9000. Both nodes run an agent: lab status asks the
// guest about its own, also while a lab exec command holds the guest's
// command channel (and, for a lab without a status channel, says that a
// command may hold it), says so when the guest does not answer (qemu
// stopped), and reports either agent killed through the same check.
func TestVMOwnKernel(t *testing.T) {
	k := need(t)
	name := labName(t, "vmo")
	src := fmt.Sprintf(`name: %s
switches: {ic: {mtu: 9000}}
nodes:
  a:
    vm: {memory: 256M}
    links: [{switch: ic, address: 198.18.10.1/24}]
    services: [{kind: agent}]
  b:
    links: [{switch: ic, address: 198.18.10.2/24}]
    services: [{kind: agent}]
`, name)
	file := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mods := t.TempDir()
	for _, m := range k.Modules {
		out, err := exec.Command("xz", "-c", m).Output()
		if err != nil {
			t.Fatalf("xz: %v (apt-get install xz-utils)", err)
		}
		if err := os.WriteFile(filepath.Join(mods, filepath.Base(m)+".xz"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary, "lab", "up", file, "--kernel", k.Image, "--modules", mods).CombinedOutput()
	if err != nil {
		t.Fatalf("lab up --kernel: %v\n%s", err, out)
	}
	step(t, "lab up --kernel", start)
	want := fmt.Sprintf("vm a: running, kernel %s (%s)", k.Release, k.Image)
	if !strings.Contains(string(out), want) {
		t.Errorf("lab up says:\n%s\nwant %q", out, want)
	}
	start = time.Now()
	pm, err := exec.CommandContext(ctx, binary, "lab", "exec", name, "b", "--", binary, "pmtu", "198.18.10.1",
		"--token-file", lab.AgentTokenFile(name)).CombinedOutput()
	if err != nil || strings.Count(string(pm), "path MTU 9000  ok") != 2 {
		t.Errorf("pmtu from namespace node b to VM node a: %v\n%s", err, pm)
	}
	t.Logf("pmtu b -> a:\n%s", pm)
	step(t, "pmtu namespace node -> VM", start)
	st, err := lab.Inspect(name)
	if err != nil {
		t.Fatal(err)
	}
	pid := st.Nodes[0].VM.PID
	if st.State != lab.StateUp || st.Nodes[0].Namespace != "" || st.Nodes[1].VM != nil {
		t.Errorf("status %s, a's namespace %q, b's VM %+v: want up, a VM with no namespace, b a namespace", st.State, st.Nodes[0].Namespace, st.Nodes[1].VM)
	}
	start = time.Now()
	checkStatusWhileBusy(ctx, t, name, "a")
	checkOlderLab(ctx, t, name, "a")
	checkGuestSilent(ctx, t, name, pid)
	checkAgentsKilled(ctx, t, name)
	step(t, "lab status asks the guest", start)

	// A guest that dies under a lab: status says so, lab exec says so in
	// one line, lab down still removes everything.
	syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 3000 && running(pid); i++ { // 60 s, only against a hang
		time.Sleep(20 * time.Millisecond)
	}
	if st, err = lab.Inspect(name); err != nil || st.State != lab.StateDamaged || !strings.Contains(strings.Join(st.Problems, "; "), "node a: its VM is stopped") ||
		!strings.Contains(strings.Join(st.Problems, "; "), "node a: service agent is stopped: its VM is not running") {
		t.Errorf("after qemu was killed: %v, state %s, problems %q", err, st.State, st.Problems)
	}
	x, err := exec.CommandContext(ctx, binary, "lab", "exec", name, "a", "--", "true").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || strings.Count(strings.TrimSpace(string(x)), "\n") != 0 || !strings.Contains(string(x), "node a: its VM is not running") {
		t.Errorf("lab exec in a stopped VM: %v: %s, want one line and exit 3", err, x)
	}
	t.Logf("lab exec in a stopped VM: %s", x)
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, name, []int{pid})
}
