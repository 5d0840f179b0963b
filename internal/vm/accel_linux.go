package vm

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/vm/cache"
)

// probeTimeout bounds the KVM probe: a kernel boots to its root mount in
// about a second under KVM; nested KVM that does not work spins instead.
const probeTimeout = 10 * time.Second

// Accel says which accelerator VMs use here, "kvm" or "tcg", and why:
// $INTERLINK_VM_ACCEL when set; tcg without a /dev/kvm qemu's user can
// open; else the result of booting k under KVM (-cpu host, no initramfs),
// as Boot runs qemu, until its panic for want of a root file system, at
// most probeTimeout. The result is kept in the cache until the host
// reboots (its boot_id changes).
func Accel(ctx context.Context, k *cache.Kernel) (accel, why string) {
	if a := os.Getenv("INTERLINK_VM_ACCEL"); a == "kvm" || a == "tcg" {
		return a, "INTERLINK_VM_ACCEL"
	}
	if _, err := kvmAccess(); err != nil {
		return "tcg", "no usable /dev/kvm: " + err.Error()
	}
	dir, err := cache.Dir()
	if err != nil {
		return "tcg", err.Error()
	}
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	type probe struct {
		BootID string `json:"boot_id"`
		Accel  string `json:"accel"`
		Why    string `json:"why"`
	}
	kept := filepath.Join(dir, "accel.json")
	var p probe
	cached := func() bool {
		data, err := os.ReadFile(kept)
		return err == nil && json.Unmarshal(data, &p) == nil && p.BootID == strings.TrimSpace(string(bootID)) && p.Accel != ""
	}
	if cached() {
		return p.Accel, p.Why + " (probed earlier this boot)"
	}
	// One probe at a time: another lab up may be probing now.
	if unlock, err := cache.Lock(); err == nil {
		defer unlock()
		if cached() {
			return p.Accel, p.Why + " (probed earlier this boot)"
		}
	}
	p = probe{BootID: strings.TrimSpace(string(bootID)), Accel: "tcg", Why: "a guest under KVM did not boot within " + probeTimeout.String()}
	if probeKVM(ctx, dir, k) {
		p.Accel, p.Why = "kvm", "a guest booted under KVM"
	}
	if ctx.Err() == nil {
		if data, err := json.Marshal(p); err == nil {
			atomicfile.WriteFile(kept, data, atomicfile.Options{})
		}
	}
	return p.Accel, p.Why
}

// probeKVM boots k under KVM as Boot runs qemu: as User, sandboxed.
func probeKVM(ctx context.Context, top string, k *cache.Kernel) bool {
	cred, err := qemuCredential("kvm")
	if err != nil {
		return false
	}
	// In the cache, under one name: a probe killed halfway leaves nothing
	// in /tmp, and the next probe starts from an empty directory.
	dir := filepath.Join(top, "kvm-probe")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil || os.Chown(dir, int(cred.Uid), int(cred.Gid)) != nil {
		return false
	}
	defer os.RemoveAll(dir)
	console := filepath.Join(dir, "console")
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Qemu, "-nodefaults", "-display", "none", "-no-reboot", "-sandbox", Sandbox,
		"-accel", "kvm", "-cpu", "host", "-m", "128", "-kernel", k.Image,
		"-append", "console=ttyS0 panic=-1", "-serial", "file:"+console)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		return false
	}
	data, _ := os.ReadFile(console)
	return strings.Contains(string(data), "Kernel panic")
}
