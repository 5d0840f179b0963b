package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/guest"
)

func TestMemAvailable(t *testing.T) {
	f, _ := os.Open("testdata/meminfo-debian12")
	defer f.Close()
	if n, err := MemAvailable(f); err != nil || n < 1<<30 {
		t.Errorf("MemAvailable = %d, %v", n, err)
	}
	g, _ := os.Open("testdata/meminfo-no-available")
	defer g.Close()
	if _, err := MemAvailable(g); err == nil {
		t.Error("no MemAvailable line: no error")
	}
}

// TestInitramfs: the archive is one busybox's cpio reads back, with the
// files the guest needs.
func TestInitramfs(t *testing.T) {
	if err := checkStatic(Busybox, "busybox-static"); err != nil {
		t.Fatalf("%v", err)
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "virtio_net.ko")
	os.WriteFile(mod, []byte("not really"), 0o644)
	path := filepath.Join(dir, "initramfs")
	files := filepath.Join(dir, "sshd")
	os.MkdirAll(filepath.Join(files, "usr/sbin"), 0o755)
	os.MkdirAll(filepath.Join(files, "lib64"), 0o755)
	os.WriteFile(filepath.Join(files, "usr/sbin/sshd"), []byte("sshd"), 0o755)
	os.WriteFile(filepath.Join(files, "lib64/ld-linux-x86-64.so.2"), []byte("ld"), 0o755)
	cfg := &guest.Config{Lab: "l", Node: "n1", SSHD: &guest.SSHD{HostKey: "KEY", Authorized: "ssh-ed25519 AAAA\n", Files: files}}
	err := WriteInitramfs(path, &cache.Kernel{Modules: []string{mod}}, interlinkBin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(Busybox, "sh", "-c", "cpio -t < "+path).CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -t: %v\n%s", err, out)
	}
	for _, want := range []string{"init", "bin/busybox", "bin/interlink", "lib/modules/virtio_net.ko", "etc/interlink/guest.json", "etc/hostname",
		// sshd, the dynamic linker and libraries it needs, its accounts
		"usr/sbin/sshd", "lib64/ld-linux-x86-64.so.2",
		"etc/ssh/sshd_config", "etc/ssh/ssh_host_key", "etc/passwd", "etc/shadow"} {
		if !strings.Contains("\n"+string(out), "\n"+want+"\n") {
			t.Errorf("initramfs lacks %s:\n%s", want, out)
		}
	}
	if err := WriteInitramfs(path, &cache.Kernel{}, "testdata/meminfo-debian12", &guest.Config{}); err == nil {
		t.Error("a binary that is not ELF: no error")
	}
}
