package cache

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckImage: a file that is not a kernel is named as such.
func TestCheckImage(t *testing.T) {
	notKernel := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(notKernel, []byte("MemTotal: 1 kB\n"), 0o644)
	err := CheckImage(notKernel)
	if !errors.Is(err, ErrNotKernel) || !strings.Contains(err.Error(), notKernel) {
		t.Errorf("CheckImage(meminfo) = %v, want ErrNotKernel naming the file", err)
	}
	if err := CheckImage("testdata/absent"); err == nil || errors.Is(err, ErrNotKernel) {
		t.Errorf("CheckImage(absent) = %v, want the open error", err)
	}
}

// TestModuleOrderMissing: a modules tree without virtio is ErrNoVirtio,
// naming the module; one that says it is built in needs no file.
func TestModuleOrderMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := ModuleOrder(dir)
	if !errors.Is(err, ErrNoVirtio) || !strings.Contains(err.Error(), "virtio_pci") {
		t.Errorf("empty tree: %v, want ErrNoVirtio naming virtio_pci", err)
	}
	builtin := "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/net/virtio_net.ko\n"
	os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte(builtin), 0o644)
	if order, err := ModuleOrder(dir); err != nil || len(order) != 0 {
		t.Errorf("built in: %v %v, want no modules", order, err)
	}
}

// TestProgramClosure: the files a dynamically linked program needs, found
// as the dynamic linker would: the host's own sshd (Debian's
// openssh-server, which the cluster tests need anyway) and libc.
func TestProgramClosure(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Fatalf("%v: apt-get install openssh-server", err)
	}
	files, err := programClosure("/", "/usr/sbin/sshd")
	if err != nil {
		t.Fatal(err)
	}
	guest := map[string]bool{}
	for _, g := range files {
		guest[g] = true
	}
	for _, want := range []string{"/usr/sbin/sshd", "/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libcrypto.so.3"} {
		if !guest[want] {
			t.Errorf("closure of sshd lacks %s: %v", want, files)
		}
	}
	if _, err := programClosure(t.TempDir(), "/usr/sbin/sshd"); err == nil {
		t.Error("a tree without sshd: no error")
	}
}

// TestClearCache: the cache and everything in it go; a missing cache is
// no error.
func TestClearCache(t *testing.T) {
	dir := filepath.Join(trustedDir(t), "cache")
	t.Setenv("INTERLINK_VM_CACHE", dir)
	if err := Clear(); err != nil {
		t.Fatalf("no cache: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "kernel", "linux-image-x"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernel", "linux-image-x", "vmlinuz"), []byte("k"), 0o644)
	os.WriteFile(filepath.Join(dir, "accel.json"), []byte("{}"), 0o644)
	if err := Clear(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cache still there: %v", err)
	}
}

// TestReadModule: compressed modules read back as the same bytes (gzip
// here, xz and zstd by the host's tools), and name the same module.
func TestReadModule(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "virtio-net.ko")
	want := []byte("\x7fELF not really a module, but bytes to round-trip")
	os.WriteFile(plain, want, 0o644)
	for _, c := range []struct{ suffix, tool string }{{".gz", "gzip"}, {".xz", "xz"}, {".zst", "zstd"}} {
		out, err := exec.Command(c.tool, "-c", plain).Output()
		if err != nil {
			t.Fatalf("%s: %v (apt-get install xz-utils zstd)", c.tool, err)
		}
		f := plain + c.suffix
		os.WriteFile(f, out, 0o644)
		got, err := ReadModule(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v", f, got, err)
		}
		if n := ModName(filepath.Base(f)); n != "virtio_net" {
			t.Errorf("modName(%s) = %s", f, n)
		}
		if !isModule(f) {
			t.Errorf("%s is not taken for a module", f)
		}
	}
}
