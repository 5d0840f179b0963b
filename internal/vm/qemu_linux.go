package vm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/guest"
)

// Qemu is the emulator VMs run in (Debian's qemu-system-x86).
var Qemu = "qemu-system-x86_64"

// Spec is one VM to boot.
type Spec struct {
	Name        string        // for qemu's -name and errors (LAB.NODE)
	Kernel      *cache.Kernel // booted with Initramfs
	Initramfs   string
	MemoryBytes int64
	CPUs        int
	NICs        []NIC
	// Dir holds the VM's files: console.log, channel.sock, status.sock,
	// qemu.log and a copy of the kernel. Boot gives it to qemu's user.
	Dir string
	// Accel is "kvm" or "tcg" (Accel gives it).
	Accel string
	// Nonce goes on the guest kernel's command line (guest.NonceParam);
	// the guest's Config records the same (NewNonce makes one per boot).
	Nonce string
	// InTaps runs fn (which opens the taps and starts qemu) in the
	// network namespace where the taps are (a lab's switch namespace);
	// nil runs it here.
	InTaps func(fn func() error) error
}

// NIC is one network interface of a VM: a tap that exists (Boot opens it
// by name where InTaps runs), the guest's MAC and its largest MTU.
type NIC struct {
	Tap string
	MAC string
	MTU int
}

// Machine is a VM that runs.
type Machine struct {
	PID     int
	Accel   string
	Console string // the console's file
	Channel string // the command channel's unix socket (Exec)
	// Status is the status channel's unix socket (Services): queries
	// only, so that a command holding Channel does not silence them. The
	// guest serves it once it says so (ServesStatus).
	Status string
	exited chan error
}

// Console and channel file names in Spec.Dir.
const (
	ConsoleFile = "console.log"
	ChannelFile = "channel.sock" // the guest's ChannelDevice
	StatusFile  = "status.sock"  // the guest's StatusDevice
	qemuLog     = "qemu.log"
	kernelFile  = "vmlinuz" // Boot's copy of Spec.Kernel.Image
)

// Sandbox is qemu's seccomp filter: no obsolete system calls, no set*id,
// no fork or exec, no changes of priority or affinity.
const Sandbox = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"

// NewNonce returns a fresh nonce for one boot (128 random bits in hex).
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Args returns qemu's arguments for s: its kernel is Dir's copy, and its
// taps are the descriptors 3, 4, ... (Boot opens them in this order).
func (s *Spec) Args() ([]string, error) {
	for _, p := range []string{s.Dir, s.Initramfs} {
		// qemu's option syntax has no quoting for a comma in a path.
		if strings.Contains(p, ",") {
			return nil, fmt.Errorf("vm %s: path %q has a comma, which qemu's options cannot take", s.Name, p)
		}
	}
	// sun_path holds 108 bytes with its terminating NUL.
	for _, sock := range []struct{ what, file string }{{"command", ChannelFile}, {"status", StatusFile}} {
		if p := filepath.Join(s.Dir, sock.file); len(p) > 107 {
			return nil, fmt.Errorf("vm %s: the %s channel's socket path %s is longer than a unix socket's 107 bytes (use a shorter INTERLINK_LAB_DIR)", s.Name, sock.what, p)
		}
	}
	if s.Nonce == "" || strings.ContainsAny(s.Nonce, " \t\n\"") {
		return nil, fmt.Errorf("vm %s: no boot nonce (vm.NewNonce)", s.Name)
	}
	cpu := "max"
	if s.Accel == "kvm" {
		cpu = "host"
	}
	args := []string{"-name", s.Name, "-nodefaults", "-display", "none", "-no-reboot", "-sandbox", Sandbox,
		"-accel", s.Accel, "-cpu", cpu, "-m", strconv.FormatInt(s.MemoryBytes>>20, 10), "-smp", strconv.Itoa(s.CPUs),
		"-kernel", filepath.Join(s.Dir, kernelFile), "-initrd", s.Initramfs,
		"-append", "console=ttyS0 panic=-1 loglevel=4 " + guest.NonceParam + "=" + s.Nonce,
		"-serial", "file:" + filepath.Join(s.Dir, ConsoleFile),
		// ttyS1 and ttyS2 in the guest, in this order.
		"-serial", "unix:" + filepath.Join(s.Dir, ChannelFile) + ",server=on,wait=off",
		"-serial", "unix:" + filepath.Join(s.Dir, StatusFile) + ",server=on,wait=off",
	}
	for i, n := range s.NICs {
		id := "n" + strconv.Itoa(i)
		args = append(args, "-netdev", "tap,id="+id+",fd="+strconv.Itoa(3+i),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=%s,mac=%s,host_mtu=%d,romfile=", id, n.MAC, n.MTU))
	}
	return args, nil
}

// Boot starts the VM and returns once qemu runs (WaitReady waits for the
// guest). qemu never runs as root: Boot gives Dir, the initramfs and a
// copy of the kernel to qemu's user (User), opens the taps itself (as
// root, where InTaps runs) and starts qemu as that user, sandboxed
// (Sandbox), with the taps as its descriptors. (qemu's own -runas drops
// root after its seccomp filter is in place, and elevateprivileges=deny
// then kills it with SIGSYS: qemu 7.2 here.) qemu runs in a session of its
// own: it outlives the caller, and whoever records Machine.PID stops it.
func Boot(s *Spec) (*Machine, error) {
	args, err := s.Args()
	if err != nil {
		return nil, err
	}
	cred, err := qemuCredential(s.Accel)
	if err != nil {
		return nil, fmt.Errorf("vm %s: %w", s.Name, err)
	}
	if err := giveDir(s, cred); err != nil {
		return nil, fmt.Errorf("vm %s: %w", s.Name, err)
	}
	log, err := os.Create(filepath.Join(s.Dir, qemuLog))
	if err != nil {
		return nil, fmt.Errorf("vm %s: %w", s.Name, err)
	}
	defer log.Close()
	cmd := exec.Command(Qemu, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	start := func() error {
		taps, err := openTaps(s.NICs)
		if err != nil {
			return err
		}
		defer closeAll(taps)
		cmd.ExtraFiles = taps
		return cmd.Start()
	}
	if s.InTaps != nil {
		err = s.InTaps(start)
	} else {
		err = start()
	}
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("vm %s: %s not found (install qemu-system-x86)", s.Name, Qemu)
		}
		return nil, fmt.Errorf("vm %s: start %s: %w", s.Name, Qemu, err)
	}
	m := &Machine{PID: cmd.Process.Pid, Accel: s.Accel, Console: filepath.Join(s.Dir, ConsoleFile),
		Channel: filepath.Join(s.Dir, ChannelFile), Status: filepath.Join(s.Dir, StatusFile), exited: make(chan error, 1)}
	go func() { m.exited <- cmd.Wait() }()
	return m, nil
}

// WaitReady waits until the guest prints guest.ReadyLine on its console, at most
// timeout. Its error names what happened (qemu's own complaint, or the
// console's last lines); the caller stops the VM.
func (m *Machine) WaitReady(ctx context.Context, name string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, _ := os.ReadFile(m.Console); strings.Contains(string(data), guest.ReadyLine) {
			return nil
		}
		select {
		case err := <-m.exited:
			if data, _ := os.ReadFile(m.Console); strings.Contains(string(data), guest.ReadyLine) {
				return fmt.Errorf("vm %s: the guest stopped after it came up: %s", name, tail(m.Console, 3))
			}
			qlog, _ := os.ReadFile(filepath.Join(filepath.Dir(m.Console), qemuLog))
			if msg := lastLine(string(qlog)); msg != "" {
				return fmt.Errorf("vm %s: qemu ended (%v): %s", name, err, msg)
			}
			return fmt.Errorf("vm %s: the guest stopped before it came up (%v); console: %s", name, err, tail(m.Console, 3))
		case <-deadline.C:
			return fmt.Errorf("vm %s: the guest did not come up within %s (%s); console: %s", name, timeout, m.Accel, tail(m.Console, 3))
		case <-ctx.Done():
			return fmt.Errorf("vm %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// ServesStatus reports whether the guest said on its console that it
// serves status queries on Status (guest.StatusLine, printed before
// guest.ReadyLine):
// a guest whose kernel has no third serial port does not, and is asked on
// Channel instead.
func (m *Machine) ServesStatus() bool {
	data, _ := os.ReadFile(m.Console)
	return strings.Contains(string(data), guest.StatusLine)
}

// tail returns the last n non-empty lines of a file, joined by " | ", or
// "(empty)".
func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(strings.ReplaceAll(l, "\r", "")); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(empty)"
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// lastLine is the last line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
