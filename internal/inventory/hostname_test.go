package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
)

// TestParseHostname: the first line that is neither blank nor a comment;
// a line longer than the kernel's 64 bytes, or a binary file (a NUL, not
// UTF-8), is no hostname. Escape sequences are kept, for the text report
// to escape and the JSON to keep (TestCheckEscapesCleaned).
func TestParseHostname(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"rac1\n", "rac1", true},
		{"# set by the installer\n\n  rac1.example.com  \nignored\n", "rac1.example.com", true},
		{"", "", true},
		{"\n# only a comment\n", "", true},
		{strings.Repeat("a", 64), strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), "", false},
		{"rac1\x00", "", false},
		{"rac1\n\x00\x01", "", false},
		{"rac1\xff\xfe", "", false},
		{"rac1\x1b]0;PWNED\x07", "rac1\x1b]0;PWNED\x07", true},
	} {
		if got, ok := parseHostname(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("parseHostname(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestHostnameBadFile: a tree whose /etc/hostname is 1 MiB, or binary, is
// read up to 4 KiB at most, gives no hostname, and says why in one line of
// the "node" section; a bad kernel hostname gives way to /etc/hostname.
func TestHostnameBadFile(t *testing.T) {
	// One copy, restored to the fixture before each case.
	const node = fixtures + "ol8-rac-bond-jumbo"
	dir := t.TempDir()
	fixturetest.Copy(t, node, dir)
	tree := func(t *testing.T, kernelHost, etcHost string) string {
		fixturetest.Restore(t, node, dir)
		if kernelHost == "" {
			os.Remove(filepath.Join(dir, "proc/sys/kernel/hostname"))
		} else {
			fixturetest.Write(t, dir, "proc/sys/kernel/hostname", kernelHost)
		}
		fixturetest.Write(t, dir, "etc/hostname", etcHost)
		return dir
	}
	for _, tc := range []struct {
		name, kernelHost, etcHost, want, section string
	}{
		{"huge", "", strings.Repeat("a", 1<<20), "", "hostname: /etc/hostname: larger than 4096 bytes (not read)"},
		{"binary", "", "\x7fELF\x02\x01\x01\x00\x00\x00\n", "", "hostname: /etc/hostname holds no hostname (binary, or longer than 64 bytes): not used"},
		{"long line", "", strings.Repeat("r", 200) + "\n", "", "hostname: /etc/hostname holds no hostname (binary, or longer than 64 bytes): not used"},
		{"bad kernel, good etc", "\x00\x00", "# comment\nrac1\n", "rac1", "hostname: /proc/sys/kernel/hostname holds no hostname (binary, or longer than 64 bytes): not used"},
		{"good", "", "rac1\n", "rac1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, _ := gatherFixture(t, tree(t, tc.kernelHost, tc.etcHost))
			if inv.Node.Hostname != tc.want {
				t.Errorf("hostname %.80q, want %q", inv.Node.Hostname, tc.want)
			}
			s := inv.Section("node")
			switch {
			case tc.section == "" && s != nil:
				t.Errorf("node section %+v, want none", *s)
			case tc.section != "" && (s == nil || s.Status != "partial" || s.Detail != tc.section):
				t.Errorf("node section %+v, want partial %q", s, tc.section)
			}
		})
	}
}
