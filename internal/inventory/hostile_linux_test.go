package inventory

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/fixturetest"
)

// gatherBounded runs Gather on root and fails the test if it does not
// return within 10 s. A FIFO that blocked a read is then opened for
// writing, which releases the reader, so a regression fails instead of
// hanging the test binary.
func gatherBounded(t *testing.T, root string, fifos ...string) (*Inventory, error) {
	t.Helper()
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	type result struct {
		inv *Inventory
		err error
	}
	done := make(chan result, 1)
	go func() {
		inv, err := Gather(context.Background(), src, Options{Now: fixedNow})
		done <- result{inv, err}
	}()
	select {
	case r := <-done:
		return r.inv, r.err
	case <-time.After(10 * time.Second):
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		<-done
		t.Fatal("Gather blocked on a special file for 10 s")
		return nil, nil
	}
}

func mkfifo(t *testing.T, p string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mknod(t *testing.T, p string, mode uint32, major, minor int) {
	t.Helper()
	roottest.Require(t, "it creates device nodes")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := syscall.Mknod(p, mode|0o644, major<<8|minor); err != nil {
		t.Fatal(err)
	}
}

// TestSpecialFilesNotOpened: FIFOs, devices and sockets where check reads
// files or lists directories are reported and never opened, also behind a
// link inside the tree; the rest of the tree is still read.
func TestSpecialFilesNotOpened(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Write(t, dir, "proc/sys/kernel/hostname", "rac1\n")
	fifos := []string{
		mkfifo(t, filepath.Join(dir, "proc/net/snmp")),
		mkfifo(t, filepath.Join(dir, "sys/class/net")),       // a directory check lists
		mkfifo(t, filepath.Join(dir, "proc/self/mountinfo")), // through proc/self
		mkfifo(t, filepath.Join(dir, "etc/fifo")),
	}
	os.Symlink("fifo", filepath.Join(dir, "etc/os-release")) // a link to a FIFO
	mknod(t, filepath.Join(dir, "proc/net/netstat"), syscall.S_IFCHR, 1, 3)
	mknod(t, filepath.Join(dir, "etc/fstab"), syscall.S_IFBLK, 7, 0)
	l, err := net.Listen("unix", filepath.Join(dir, "proc/sys/kernel/osrelease"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })

	inv, err := gatherBounded(t, dir, fifos...)
	if err != nil {
		t.Fatalf("a partly readable tree: %v", err)
	}
	if inv.Node.Hostname != "rac1" {
		t.Errorf("hostname %q: the readable part of the tree was not read", inv.Node.Hostname)
	}
	want := map[string]string{
		"/proc/net/snmp":             "a named pipe (FIFO), not a regular file",
		"/sys/class/net":             "a named pipe (FIFO), not a directory",
		"/proc/self/mountinfo":       "a named pipe (FIFO)",
		"/etc/os-release":            "a named pipe (FIFO)",
		"/proc/net/netstat":          "a character device",
		"/etc/fstab":                 "a block device",
		"/proc/sys/kernel/osrelease": "a socket",
	}
	got := map[string]string{}
	for _, u := range inv.Unreadable {
		got[u.Path] = u.Reason
	}
	for p, reason := range want {
		if !strings.Contains(got[p], reason) {
			t.Errorf("unreadable %s = %q, want %q", p, got[p], reason)
		}
	}
	s := inv.Section("files")
	if s == nil || s.Status != "partial" || !strings.Contains(s.Detail, "7 not read: /etc/fstab (a block device") {
		t.Errorf("files section %+v", s)
	}
	if s := inv.Section("interfaces"); s == nil || s.Status != "unreadable" {
		t.Errorf("interfaces section %+v", s)
	}
}

// TestNothingReadable: a tree in which every file check reads is a FIFO
// is not an OK node with nothing found: Gather says nothing could be read
// and names what it refused.
func TestNothingReadable(t *testing.T) {
	dir := t.TempDir()
	f := mkfifo(t, filepath.Join(dir, "proc/net/snmp"))
	_, err := gatherBounded(t, dir, f)
	if !errors.Is(err, ErrNothingRead) || !strings.Contains(err.Error(), "/proc/net/snmp (a named pipe (FIFO)") {
		t.Errorf("Gather = %v, want ErrNothingRead naming /proc/net/snmp", err)
	}
}

// TestFileSizeBound: a file larger than MaxFileBytes is refused, not read
// into memory whole.
func TestFileSizeBound(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Write(t, dir, "etc/hostname", "rac1\n")
	fixturetest.Write(t, dir, "etc/os-release", "")
	if err := os.Truncate(filepath.Join(dir, "etc/os-release"), MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	inv, err := gatherBounded(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Unreadable) != 1 || inv.Unreadable[0].Path != "/etc/os-release" || !strings.Contains(inv.Unreadable[0].Reason, "larger than 16 MiB") {
		t.Errorf("unreadable = %+v", inv.Unreadable)
	}
}

// TestWrongKinds: a regular file where a directory is listed, and a
// directory with more entries than the bound, are named, not read.
func TestWrongKinds(t *testing.T) {
	old := maxDirEntries
	maxDirEntries = 10
	t.Cleanup(func() { maxDirEntries = old })
	dir := t.TempDir()
	fixturetest.Write(t, dir, "etc/hostname", "rac1\n")
	fixturetest.Write(t, dir, "sys/class/net", "not a directory\n")
	for i := range 11 {
		fixturetest.Write(t, dir, "etc/sysconfig/network-scripts/ifcfg-eth"+strconv.Itoa(i), "DEVICE=eth0\n")
	}
	inv, err := gatherBounded(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range inv.Unreadable {
		got[u.Path] = u.Reason
	}
	for p, want := range map[string]string{"/sys/class/net": "a regular file, not a directory (not opened)",
		"/etc/sysconfig/network-scripts": "more than 10 entries (not read)"} {
		if got[p] != want {
			t.Errorf("unreadable %s = %q, want %q", p, got[p], want)
		}
	}
}

// TestGatherStopsWithContext: once the context ends no file is read and
// Gather says it stopped.
func TestGatherStopsWithContext(t *testing.T) {
	src, err := Open(fixtures + "ol8-rac-bond-jumbo")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Gather(ctx, src, Options{Now: fixedNow})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Gather with an ended context = %v", err)
	}
	if n := len(src.Files()); n != 0 {
		t.Errorf("%d files read after the context ended", n)
	}
}

// TestBundleRootSpecial: --root naming a FIFO or a device is refused
// without opening it (opening a FIFO blocks until a writer comes).
func TestBundleRootSpecial(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "b.tar.gz"))
	done := make(chan error, 1)
	go func() { _, err := Open(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBadRoot) || !strings.Contains(err.Error(), "a named pipe (FIFO), not a directory or a .tar.gz bundle") {
			t.Errorf("Open(FIFO) = %v", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("Open blocked on a FIFO for 10 s")
	}
	if _, err := Open("/dev/null"); !errors.Is(err, ErrBadRoot) || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("Open(/dev/null) = %v", err)
	}
}

// TestUnpackStopsWithContext: unpacking ends when the context does and
// leaves no temporary directory.
func TestUnpackStopsWithContext(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "etc/hostname", Typeflag: tar.TypeReg, Size: 5, Mode: 0o644})
	tw.Write([]byte("rac1\n"))
	tw.Close()
	zw.Close()
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	os.WriteFile(file, buf.Bytes(), 0o644)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenContext(ctx, file); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext with an ended context = %v", err)
	}
	assertEmpty(t, tmp)
}
