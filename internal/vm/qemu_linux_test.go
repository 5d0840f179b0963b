package vm

import (
	"slices"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/vm/cache"
)

// TestArgs: qemu's command line for a VM with one NIC, and the paths qemu
// cannot take.
func TestArgs(t *testing.T) {
	s := &Spec{Name: "l.n1", Kernel: &cache.Kernel{Image: "/k/vmlinuz"}, Initramfs: "/d/initramfs", MemoryBytes: 512 << 20, Nonce: "abc1",
		CPUs: 2, Dir: "/d", Accel: "tcg", NICs: []NIC{{Tap: "n1-eth1", MAC: "52:54:00:01:02:03", MTU: 9000}, {Tap: "n1-eth2", MAC: "52:54:00:01:02:04", MTU: 1500}}}
	args, err := s.Args()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{"-accel tcg -cpu max -m 512 -smp 2", "-kernel /d/vmlinuz -initrd /d/initramfs",
		"-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
		"-append console=ttyS0 panic=-1 loglevel=4 interlink.guest=abc1",
		"-serial file:/d/console.log", "-serial unix:/d/channel.sock,server=on,wait=off",
		"-serial unix:/d/status.sock,server=on,wait=off",
		"-netdev tap,id=n0,fd=3", "-netdev tap,id=n1,fd=4",
		"-device virtio-net-pci,netdev=n0,mac=52:54:00:01:02:03,host_mtu=9000,romfile="} {
		if !strings.Contains(line, want) {
			t.Errorf("qemu %s\nlacks %q", line, want)
		}
	}
	s.Nonce = ""
	if _, err := s.Args(); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("no nonce: %v", err)
	}
	s.Nonce = "abc1"
	s.Accel = "kvm"
	if args, _ := s.Args(); !slices.Contains(args, "host") {
		t.Errorf("kvm: %v, want -cpu host", args)
	}
	s.Dir = "/a,b"
	if _, err := s.Args(); err == nil || !strings.Contains(err.Error(), "comma") {
		t.Errorf("a comma in a path: %v", err)
	}
	s.Dir = "/" + strings.Repeat("x", 100)
	if _, err := s.Args(); err == nil || !strings.Contains(err.Error(), "107 bytes") {
		t.Errorf("a long socket path: %v", err)
	}
	// At the limit: channel.sock (the longer name) at 107 bytes fits,
	// at 108 it does not, in one error naming that socket.
	s.Dir = "/" + strings.Repeat("x", 107-len("/"+ChannelFile)-1)
	if _, err := s.Args(); err != nil {
		t.Errorf("socket paths of 107 bytes at most: %v", err)
	}
	s.Dir += "x"
	if _, err := s.Args(); err == nil || !strings.Contains(err.Error(), "the command channel's socket path") {
		t.Errorf("a channel.sock path of 108 bytes: %v", err)
	}
}
