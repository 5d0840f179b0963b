//go:build linux

package vmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
)

// TestVMOwnKernel: `lab up --kernel FILE --modules DIR` boots a kernel
// given as files (here the cached Debian image and its virtio modules, as
// a user would give their own), in a lab where a VM node and a namespace
// node share a switch: the namespace node proves the path to the VM's
// agent at 9000.
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
`, name)
	file := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary, "lab", "up", file, "--kernel", k.Image, "--modules", filepath.Dir(k.Modules[0])).CombinedOutput()
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
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, name, []int{pid})
}
