package vm

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFrames: frames survive a line with leftovers of an earlier caller,
// a damaged frame and a payload containing the magic.
func TestFrames(t *testing.T) {
	var line bytes.Buffer
	fw := &frameWriter{w: &line}
	fw.send(frame{typ: frameStdout, id: 1, payload: []byte("whole but old")})
	old := line.Bytes()[:7] // the tail of a frame cut short
	line.Reset()
	line.Write([]byte("garbage IL"))
	line.Write(old[3:])
	fw.send(frame{typ: frameStdout, id: 2, payload: []byte("ILvm inside")})
	// A damaged frame: one payload byte flipped.
	start := line.Len()
	fw.send(frame{typ: frameStderr, id: 2, payload: []byte("damaged")})
	line.Bytes()[start+14] ^= 0xff
	fw.data(frameStdout, 3, bytes.Repeat([]byte{0}, maxPayload+10))
	fw.send(frame{typ: frameExit, id: 2, payload: []byte(`{"code":3}`)})
	r := newFrameReader(&line)
	var got []string
	for {
		f, err := r.next()
		if err != nil {
			if !errors.Is(err, errShortRead) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, fmt.Sprintf("%c:%d:%s", f.typ, f.id, short(f.payload)))
	}
	want := []string{"O:2:ILvm inside", "O:3:65536 bytes", "O:3:10 bytes", `X:2:{"code":3}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFramesCutShort: the start of a request whose caller went away (qemu
// drops what it had not read) does not swallow the next caller's frame,
// whether the next frame is longer than what the cut one lacks (its CRC
// fails at once) or shorter (its rest never comes: the reader gives up on
// it after partialFrameTimeout without a byte), and a frame that comes
// slowly is still whole.
func TestFramesCutShort(t *testing.T) {
	defer func(d time.Duration) { partialFrameTimeout = d }(partialFrameTimeout)
	partialFrameTimeout = 100 * time.Millisecond
	cut := func(n int) []byte {
		var b bytes.Buffer
		(&frameWriter{w: &b}).send(frame{typ: frameRequest, id: 7, payload: bytes.Repeat([]byte("x"), n)})
		return b.Bytes()[:frameHeader+3]
	}
	whole := func(id uint32) []byte {
		var b bytes.Buffer
		(&frameWriter{w: &b}).send(frame{typ: frameQuery, id: id, payload: []byte(`[{"kind":"agent","address":"127.0.0.1:7471"}]`)})
		return b.Bytes()
	}
	host, guest := net.Pipe()
	defer host.Close()
	go func() {
		for _, b := range [][]byte{cut(10), whole(1), cut(1000), whole(2)} {
			if _, err := host.Write(b); err != nil {
				return
			}
		}
	}()
	// A test that failed would otherwise wait for a frame for ever.
	stop := time.AfterFunc(20*time.Second, func() { guest.Close() })
	defer stop.Stop()
	r := newFrameReader(guest)
	r.giveUpOnCut(guest)
	for _, id := range []uint32{1, 2} {
		start := time.Now()
		f, err := r.next()
		if err != nil || f.typ != frameQuery || f.id != id {
			t.Fatalf("frame %d: %c %d %v", id, f.typ, f.id, err)
		}
		t.Logf("frame %d after %s", id, time.Since(start))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("frame %d took %s", id, took)
		}
	}
	// A frame whose bytes come slowly, each well within the timeout but
	// the whole taking several times it, is whole: some 60 bytes 8 ms
	// apart, against 200 ms (a writer held 190 ms still makes it).
	partialFrameTimeout = 200 * time.Millisecond
	go func() {
		for _, c := range whole(3) {
			if _, err := host.Write([]byte{c}); err != nil {
				return
			}
			time.Sleep(8 * time.Millisecond)
		}
	}()
	start := time.Now()
	if f, err := r.next(); err != nil || f.id != 3 {
		t.Errorf("a slow frame: %d %v, want frame 3", f.id, err)
	}
	took := time.Since(start)
	t.Logf("slow frame after %s", took)
	if took < 2*partialFrameTimeout {
		t.Errorf("the slow frame took %s, not several timeouts of %s: it tested nothing", took, partialFrameTimeout)
	}
	guest.Close()
	if _, err := r.next(); !errors.Is(err, errShortRead) {
		t.Errorf("after the line closed: %v, want errShortRead", err)
	}
}

// short shows a payload of zeros by its length.
func short(b []byte) string {
	if len(b) > 0 && b[0] == 0 {
		return fmt.Sprintf("%d bytes", len(b))
	}
	return string(b)
}

// TestCheckImage: a file that is not a kernel is named as such.
func TestCheckImage(t *testing.T) {
	err := CheckImage("testdata/meminfo-debian12")
	if !errors.Is(err, ErrNotKernel) || !strings.Contains(err.Error(), "testdata/meminfo-debian12") {
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
	cfg := &GuestConfig{Lab: "l", Node: "n1", SSHD: &GuestSSHD{HostKey: "KEY", Authorized: "ssh-ed25519 AAAA\n", Files: files}}
	err := WriteInitramfs(path, &Kernel{Modules: []string{mod}}, interlinkBin, cfg)
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
	if err := WriteInitramfs(path, &Kernel{}, "testdata/meminfo-debian12", &GuestConfig{}); err == nil {
		t.Error("a binary that is not ELF: no error")
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
	dir := filepath.Join(t.TempDir(), "cache")
	t.Setenv("INTERLINK_VM_CACHE", dir)
	if err := ClearCache(); err != nil {
		t.Fatalf("no cache: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "kernel", "linux-image-x"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernel", "linux-image-x", "vmlinuz"), []byte("k"), 0o644)
	os.WriteFile(filepath.Join(dir, "accel.json"), []byte("{}"), 0o644)
	if err := ClearCache(); err != nil {
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
		got, err := readModule(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v", f, got, err)
		}
		if n := modName(filepath.Base(f)); n != "virtio_net" {
			t.Errorf("modName(%s) = %s", f, n)
		}
		if !isModule(f) {
			t.Errorf("%s is not taken for a module", f)
		}
	}
}
