package cache

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trustedDir is a fresh directory every component of which Trusted
// accepts (t.TempDir is under /tmp, which others can write): under /run
// or $HOME, removed after the test. The test skips where there is none.
func trustedDir(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	for _, base := range []string{os.TempDir(), "/run", "/var/cache", home} {
		if base == "" || Trusted(base) != nil {
			continue
		}
		dir, err := os.MkdirTemp(base, "interlink-cache-test-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Skip("no directory here whose every component is root's (or this user's) alone")
	return ""
}

// TestTrusted: a cache under root's directories is trusted, also where it
// does not exist yet; a directory others can write (a shared one like
// /tmp, or one with mode 0777), or one another user owns, anywhere on the
// path, is named in one line with what to do, as is a link whose target
// is such a directory.
func TestTrusted(t *testing.T) {
	base := trustedDir(t)
	if err := Trusted(filepath.Join(base, "vm", "not", "yet")); err != nil {
		t.Errorf("a cache to make under %s: %v", base, err)
	}
	check := func(what, dir, named, fix string) {
		t.Helper()
		err := Trusted(dir)
		if !errors.Is(err, ErrUntrusted) {
			t.Fatalf("%s: %v, want ErrUntrusted", what, err)
		}
		if msg := err.Error(); !strings.Contains(msg, named+" is ") || !strings.Contains(msg, fix) || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want one line naming %s and saying %q", what, msg, named, fix)
		}
	}
	check("under /tmp", filepath.Join(t.TempDir(), "vm"), os.TempDir(), "set INTERLINK_VM_CACHE")
	open := filepath.Join(base, "open")
	os.MkdirAll(filepath.Join(open, "vm"), 0o755)
	os.Chmod(open, 0o777)
	check("mode 0777 above it", filepath.Join(open, "vm"), open, "chmod go-w "+open)
	check("mode 0777 itself", open, open, "(mode 0777)")
	os.Chmod(open, 0o775)
	check("group-writable", filepath.Join(open, "vm", "x"), open, "(mode 0775)")
	os.Chmod(open, 0o755)
	if err := Trusted(filepath.Join(open, "vm")); err != nil {
		t.Errorf("after chmod go-w: %v", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(t.TempDir(), link)
	check("a link into /tmp", filepath.Join(link, "vm"), os.TempDir(), "INTERLINK_VM_CACHE")
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o755)
		os.Chown(theirs, 65534, 65534)
		check("owned by nobody", filepath.Join(theirs, "vm"), theirs, "chown root "+theirs)
	}
}

// TestDirUntrusted: Dir refuses $INTERLINK_VM_CACHE in a directory others
// can write, and makes nothing there.
func TestDirUntrusted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vm")
	t.Setenv("INTERLINK_VM_CACHE", dir)
	if _, err := Dir(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Dir() = %v, want ErrUntrusted", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Dir made %s: %v", dir, err)
	}
	ok := filepath.Join(trustedDir(t), "vm")
	t.Setenv("INTERLINK_VM_CACHE", ok)
	if got, err := Dir(); err != nil || got != ok {
		t.Errorf("Dir() = %s, %v, want %s made", got, err, ok)
	}
}

// TestReadKernelConfined: kernel.json names files inside its directory
// only, regular files, and records the package's SHA-256; a kernel kept
// without one is fetched again (not there).
func TestReadKernelConfined(t *testing.T) {
	dir := t.TempDir()
	image := make([]byte, 0x300)
	copy(image[0x202:], "HdrS")
	os.WriteFile(filepath.Join(dir, "vmlinuz"), image, 0o644)
	os.Mkdir(filepath.Join(dir, "modules"), 0o755)
	os.WriteFile(filepath.Join(dir, "modules", "virtio.ko"), []byte("m"), 0o644)
	os.Symlink("/etc/shadow", filepath.Join(dir, "modules", "shadow.ko"))
	write := func(k Kernel) {
		data, _ := json.Marshal(k)
		os.WriteFile(filepath.Join(dir, "kernel.json"), data, 0o644)
	}
	good := Kernel{Image: "vmlinuz", Modules: []string{"modules/virtio.ko"}, Source: "debian:x", Deb: "x.deb", DebSHA256: "ab"}
	write(good)
	k, err := readKernel(dir)
	if err != nil || k.Image != filepath.Join(dir, "vmlinuz") || k.Modules[0] != filepath.Join(dir, "modules/virtio.ko") {
		t.Fatalf("a good kernel.json: %+v, %v", k, err)
	}
	for _, c := range []struct {
		what string
		k    Kernel
		want string
	}{
		{"a module outside", Kernel{Image: "vmlinuz", Modules: []string{"../../../etc/shadow"}, DebSHA256: "ab"}, "outside its directory"},
		{"an absolute image", Kernel{Image: "/boot/vmlinuz", DebSHA256: "ab"}, "outside its directory"},
		{"a link out", Kernel{Image: "vmlinuz", Modules: []string{"modules/shadow.ko"}, DebSHA256: "ab"}, "not a regular file"},
		{"no SHA-256", Kernel{Image: "vmlinuz"}, "no package SHA-256"},
	} {
		write(c.k)
		if _, err := readKernel(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}
