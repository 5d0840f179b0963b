package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/bintest"
	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/channel"
	"github.com/interlink/interlink/internal/vm/guest"
)

var interlinkBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The tests that fetch a kernel and boot a guest skip; the
		// initramfs test packs busybox-static (a static ELF file, which
		// it needs anyway) instead of a freshly built interlink.
		interlinkBin = Busybox
		os.Exit(m.Run())
	}
	bin, cleanup, err := bintest.Build("interlink-vm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	interlinkBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// testKernel fetches (once) Debian's kernel into the cache, as lab up
// does (refreshing a stale package list once).
func testKernel(t *testing.T) *cache.Kernel {
	t.Helper()
	roottest.Require(t, "qemu's taps, the kernel cache: it fetches a kernel and boots guests")
	if _, err := exec.LookPath(Qemu); err != nil {
		t.Fatalf("%s not found: apt-get install qemu-system-x86 busybox-static", Qemu)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	k, err := cache.DebianKernel(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel %s (%s) in %s", k.Release, k.Source, time.Since(start).Round(time.Millisecond))
	return k
}

// TestBootExec boots one guest without links and runs commands in it
// through the serial channel: exit codes, stderr, output larger than a
// frame arriving intact, the guest's own kernel.
func TestBootExec(t *testing.T) {
	k := testKernel(t)
	dir := passableDir(t)
	init := filepath.Join(dir, "initramfs")
	nonce := NewNonce()
	if err := WriteInitramfs(init, k, interlinkBin, &guest.Config{Lab: "t", Node: "g1", Nonce: nonce}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	accel, why := Accel(ctx, k)
	t.Logf("accel %s: %s", accel, why)
	s := &Spec{Name: "test.g1", Kernel: k, Initramfs: init, MemoryBytes: 256 << 20, CPUs: 1, Dir: dir, Accel: accel, Nonce: nonce}
	start := time.Now()
	m, err := Boot(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopPID(t, m.PID)
		if t.Failed() {
			data, _ := os.ReadFile(m.Console)
			t.Logf("console:\n%s", data)
		}
	})
	if err := m.WaitReady(ctx, s.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("guest up in %s", time.Since(start).Round(time.Millisecond))
	run := func(argv ...string) (string, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		code, err := Exec(ctx, m.Channel, channel.Command{Argv: argv}, &out, &errb)
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return out.String(), errb.String(), code
	}
	if out, _, code := run("uname", "-r"); code != 0 || strings.TrimSpace(out) != k.Release {
		t.Errorf("uname -r = %q (exit %d), want the guest's kernel %s", out, code, k.Release)
	}
	if out, _, code := run("hostname"); code != 0 || strings.TrimSpace(out) != "g1" {
		t.Errorf("hostname = %q (exit %d), want g1", out, code)
	}
	if _, errs, code := run("sh", "-c", "echo oops >&2; exit 7"); code != 7 || errs != "oops\n" {
		t.Errorf("exit %d stderr %q, want 7 and oops", code, errs)
	}
	if _, _, code := run("sh", "-c", "kill -9 $$"); code != 128+9 {
		t.Errorf("killed by SIGKILL: exit %d, want 137", code)
	}
	// 200 KB of random bytes (every value), across many frames, through
	// a raw line.
	t0 := time.Now()
	out, _, code := run("sh", "-c", "head -c 200000 /dev/urandom > /tmp/r && cat /tmp/r")
	if code != 0 || len(out) != 200000 {
		t.Fatalf("big output: %d bytes, exit %d", len(out), code)
	}
	t.Logf("200000 bytes in %s", time.Since(t0).Round(time.Millisecond))
	sum, _, _ := run("sha256sum", "/tmp/r")
	if got := fmt.Sprintf("%x", sha256.Sum256([]byte(out))); !strings.HasPrefix(sum, got) {
		t.Errorf("200000 bytes arrived changed: sha256 %s here, %s in the guest", got, sum)
	}
	var out2, err2 bytes.Buffer
	if _, err := Exec(ctx, m.Channel, channel.Command{Argv: []string{"/nonexistent"}}, &out2, &err2); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing program: %v, want its error", err)
	}
	checkBackground(t, run)
	checkStatusPort(t, m)
	checkUnprivileged(t, m.PID)
	data, _ := os.ReadFile(m.Console)
	t.Logf("console:\n%s", data)
}

// checkBackground: a command that leaves a child in the background
// holding its output returns when it exits, with what it wrote, as in a
// namespace node: the child still runs after Exec returned.
func checkBackground(t *testing.T, run func(...string) (string, string, int)) {
	t.Helper()
	out, _, code := run("sh", "-c", "sleep 60 & echo $!")
	pid := strings.TrimSpace(out)
	if code != 0 || pid == "" {
		t.Fatalf("sh -c 'sleep 60 & echo $!': %q, exit %d", out, code)
	}
	if _, _, code := run("kill", "-0", pid); code != 0 {
		t.Errorf("the background sleep %s had ended when its command's Exec returned: Exec waited for it", pid)
	}
	run("kill", pid)
}

// checkUnprivileged: qemu runs sandboxed, as User, never as root.
func checkUnprivileged(t *testing.T, pid int) {
	t.Helper()
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !strings.Contains(string(cmdline), "-sandbox\x00"+Sandbox+"\x00") {
		t.Errorf("qemu's command line lacks -sandbox %s: %q", Sandbox, cmdline)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
			for _, id := range f[1:] {
				if id == "0" {
					t.Errorf("qemu runs as root: %s", l)
				}
			}
		}
		if strings.HasPrefix(l, "Seccomp:") && strings.TrimSpace(strings.TrimPrefix(l, "Seccomp:")) != "2" {
			t.Errorf("qemu has no seccomp filter: %s", l)
		}
	}
}

// passableDir is a fresh directory qemu's user can reach: t.TempDir with
// the directory above it opened for passing (o+x).
func passableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkStatusPort: the guest serves queries on its third serial port
// while a command (sleep) holds its command channel, and refuses a
// command there.
func checkStatusPort(t *testing.T, m *Machine) {
	t.Helper()
	if !m.ServesStatus() {
		t.Fatalf("the guest does not say %q on its console", guest.StatusLine)
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	held := &seen{want: "held", at: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := Exec(ctx, m.Channel, channel.Command{Argv: []string{"sh", "-c", "echo held; exec sleep 30"}}, held, io.Discard)
		done <- err
	}()
	select {
	case <-held.at:
	case err := <-done:
		t.Fatalf("the command that holds the channel ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the command that holds the channel did not start within 20s")
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	a, err := Services(qctx, m.Status, []channel.ServiceProbe{{Kind: channel.ServiceAgent, Address: "127.0.0.1:1"}})
	if err != nil || len(a) != 1 || a[0].Error != "the guest did not start agent" {
		t.Errorf("a query on the status port while a command holds the channel: %+v, %v", a, err)
	}
	t.Logf("answered on the status port in %s", time.Since(start).Round(time.Millisecond))
	if _, err := Exec(qctx, m.Status, channel.Command{Argv: []string{"true"}}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "answers queries only") {
		t.Errorf("a command on the status port: %v, want the refusal", err)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the held command, stopped: %v", err)
	}
}

func stopPID(t *testing.T, pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 3000; i++ { // 60 s, only against a hang
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("qemu %d still there", pid)
}
