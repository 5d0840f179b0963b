//go:build linux

package vmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/vm/cache"
)

// mixed is a lab of one VM node and one namespace node on a 9000 switch.
func mixed(t *testing.T, name, vmSpec string) string {
	t.Helper()
	src := fmt.Sprintf(`name: %s
switches: {ic: {mtu: 9000}}
nodes:
  a:
    vm: %s
    links: [{switch: ic, address: 198.18.10.1/24}]
  b:
    links: [{switch: ic, address: 198.18.10.2/24}]
`, name, vmSpec)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func labName(t *testing.T, prefix string) string {
	name := fmt.Sprintf("%s%d", prefix, os.Getpid()%100000)
	t.Cleanup(func() { lab.Down(name) })
	return name
}

// TestVMRefused: a file that is not a kernel, a kernel without virtio,
// more memory than the host has: one line each, before anything is built.
func TestVMRefused(t *testing.T) {
	k := need(t)
	notKernel := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(notKernel, []byte("#!/bin/sh\necho not a kernel\n"), 0o644)
	noVirtio := t.TempDir()
	for _, c := range []struct {
		vm   string
		is   error
		want string
	}{
		{"{kernel: " + notKernel + "}", cache.ErrNotKernel, "not a Linux kernel image"},
		{"{kernel: " + k.Image + ", modules: " + noVirtio + "}", cache.ErrNoVirtio, "no module virtio_pci"},
		{"{memory: 100000G}", nil, "host has"},
	} {
		name := labName(t, "vmr")
		topo, err := lab.Load(mixed(t, name, c.vm))
		if err != nil {
			t.Fatal(err)
		}
		_, err = lab.Up(context.Background(), topo, lab.WithBinary(binary))
		if err == nil || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("vm: %s: %v, want one line with %q", c.vm, err, c.want)
		}
		nothingLeft(t, name, nil)
	}
}

// TestVMUntrustedCache: lab up of a VM topology whose $INTERLINK_VM_CACHE
// others can write fails in one line naming the directory at fault, before
// anything is built or booted, through the command as people run it.
func TestVMUntrustedCache(t *testing.T) {
	need(t)
	open := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	name := labName(t, "vmc")
	cmd := exec.Command(binary, "lab", "up", mixed(t, name, "{memory: 256M}"))
	cmd.Env = append(os.Environ(), "INTERLINK_VM_CACHE="+open)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), open+" is writable by its group or others (mode 0777)") {
		t.Errorf("lab up with a world-writable cache: %v, stderr %q; want exit 3 and one line naming %s", err, stderr.String(), open)
	}
	if entries, _ := os.ReadDir(open); len(entries) > 0 {
		t.Errorf("the untrusted cache got %d entries", len(entries))
	}
	nothingLeft(t, name, nil)
}

// TestVMBootTimeout: a guest that does not come up in time fails lab up
// with the console's last lines, and nothing is left (its qemu, the
// namespace node, taps, files).
func TestVMBootTimeout(t *testing.T) {
	need(t)
	name := labName(t, "vmb")
	topo, err := lab.Load(mixed(t, name, "{memory: 256M}"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { lab.VMBootTimeout = d }(lab.VMBootTimeout)
	lab.VMBootTimeout = 3 * time.Second
	start := time.Now()
	_, err = lab.Up(context.Background(), topo, lab.WithBinary(binary))
	if err == nil || !strings.Contains(err.Error(), "did not come up within 3s") || !strings.Contains(err.Error(), "console:") {
		t.Fatalf("lab up: %v, want the guest's timeout with its console", err)
	}
	t.Logf("%v (after %s)", err, time.Since(start).Round(time.Millisecond))
	nothingLeft(t, name, nil)
}

// TestVMKill9: kill -9 of `interlink lab up` once its qemu runs leaves a
// lab that lab down removes whole (qemu by its recorded PID, the
// namespaces with the taps, the files). Up of the same name runs the same
// removal first.
func TestVMKill9(t *testing.T) {
	need(t)
	name := labName(t, "vmk")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, binary, "lab", "up", mixed(t, name, "{memory: 256M}"))
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer up.Wait()
	defer up.Process.Kill()
	var pid int
	for pid == 0 {
		if ctx.Err() != nil {
			t.Fatal("lab up recorded no qemu within 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
		data, err := os.ReadFile(filepath.Join(stateDir(), name+".json"))
		var st struct {
			VMs []struct{ PID int } `json:"vms"`
		}
		if err == nil && json.Unmarshal(data, &st) == nil && len(st.VMs) > 0 {
			pid = st.VMs[0].PID
		}
	}
	if err := up.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	up.Wait()
	if !running(pid) {
		t.Fatalf("qemu %d is not running after lab up was killed: the test shows nothing", pid)
	}
	if err := lab.Down(name); err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, name, []int{pid})
}
