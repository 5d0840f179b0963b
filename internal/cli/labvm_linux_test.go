package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestLabGuestOnHost: the guest side run on a host (whose kernel command
// line carries no boot nonce) says so in one line, exit 3, and touches
// nothing: the sysctls its configuration would set keep their values, and
// no serial port is opened (inotify sees every open in /dev).
func TestLabGuestOnHost(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "guest.json")
	os.WriteFile(cfg, []byte(`{"lab":"l","node":"n1","nonce":"00ff","forward":true,"links":[]}`), 0o644)
	sysctls := []string{"/proc/sys/net/ipv6/conf/default/accept_dad", "/proc/sys/net/ipv4/ip_forward"}
	read := func() string {
		var b strings.Builder
		for _, p := range sysctls {
			v, _ := os.ReadFile(p)
			b.WriteString(p + "=" + strings.TrimSpace(string(v)) + " ")
		}
		return b.String()
	}
	before := read()
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, "/dev", unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLab(t, "guest", cfg)
	if code != ExitUnknown || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "interlink: lab guest: not a VM node's guest") {
		t.Errorf("lab guest on a host: exit %d, stdout %q, stderr %q; want exit 3 and one line", code, stdout, stderr)
	}
	if after := read(); after != before {
		t.Errorf("lab guest on a host changed sysctls: %s, was %s", after, before)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(in, buf)
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			if strings.HasPrefix(name, "ttyS") {
				t.Errorf("lab guest on a host opened /dev/%s", name)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
