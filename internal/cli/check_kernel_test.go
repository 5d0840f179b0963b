package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/rules"
)

// kernelFinding runs check --json on root and returns its
// KERNEL-FACILITIES finding, nil when there is none.
func kernelFinding(t *testing.T, args ...string) *rules.Finding {
	t.Helper()
	out, errOut, code := run(t, append([]string{"check", "--json"}, args...)...)
	if code == ExitUnknown || errOut != "" {
		t.Fatalf("check %v: exit %d, stderr %q", args, code, errOut)
	}
	var res rules.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var found *rules.Finding
	for i, f := range res.Findings {
		if f.Rule == "KERNEL-FACILITIES" {
			if found != nil {
				t.Fatalf("two KERNEL-FACILITIES findings")
			}
			found = &res.Findings[i]
		}
	}
	return found
}

// named returns the facilities a kernel finding lists in its evidence.
func named(f *rules.Finding) string {
	var b strings.Builder
	for _, e := range f.Evidence[1:] {
		b.WriteString(e.What + "\n")
	}
	return b.String()
}

// TestCheckKernelFacilities audits the RAC fixture (NFS mounts, bonded
// interconnect) as captured from nodes on the kernels RAC runs on, by the
// tree's /proc/sys/kernel/osrelease, directly and from a --collect bundle.
func TestCheckKernelFacilities(t *testing.T) {
	fixedClock(t)
	// One copy of the fixture serves every case (they run one after the
	// other): each writes both files the cases vary, the release and the
	// mountstats with or without its errors column.
	root := filepath.Join(t.TempDir(), "node")
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", root)
	b, err := os.ReadFile(filepath.Join(root, "proc/self/mountstats"))
	if err != nil {
		t.Fatal(err)
	}
	mountstats, noErrorsColumn := string(b), withoutErrorsColumn(t, root)
	for _, c := range []struct {
		release   string
		severity  rules.Severity
		names     []string // facilities the finding must name
		notNamed  []string // and must not
		message   string   // in the finding's message, when set
		noErrors  bool     // the tree's mountstats has per-op lines of 8 numbers, as before 5.3
		noFinding bool
	}{
		{release: "3.10.0-1160.el7.x86_64", severity: rules.Warning, noErrors: true,
			names: []string{"/proc/thread-self", "tcpi_bytes_acked", "tcpi_min_rtt", "UDP_SEGMENT", "pidfd_open", "mountstats", "gso_size"}},
		{release: "4.14.35-2047.518.4.el7uek.x86_64", severity: rules.Warning, noErrors: true,
			names: []string{"UDP_SEGMENT", "pidfd_open", "mountstats", "gso_size"}, notNamed: []string{"thread-self", "tcpi_"}},
		// RHEL 8's 4.18 with the errors column backported: the tree's own
		// mountstats decides, not the release.
		{release: "4.18.0-553.el8_10.x86_64", severity: rules.Info,
			names: []string{"pidfd_open", "gso_size"}, notNamed: []string{"thread-self", "tcpi_", "UDP_SEGMENT", "mountstats"}},
		// A tree whose release says 5.4 but whose mountstats lacks the
		// column: named, from the file.
		{release: "5.4.17-2136.330.7.1.el8uek.x86_64", severity: rules.Warning, noErrors: true,
			names: []string{"mountstats per-operation errors column, Linux 5.3 (/proc/self/mountstats", "gso_size"}},
		{release: "5.4.17-2136.330.7.1.el8uek.x86_64", severity: rules.Info,
			names: []string{"gso_size"}, notNamed: []string{"thread-self", "tcpi_", "UDP_SEGMENT", "pidfd_open", "mountstats"}},
		{release: "5.15.0-200.131.27.el9uek.x86_64", noFinding: true},
		{release: "not a release", severity: rules.Info, message: "not one interlink can read"},
		{release: "2.6.32-754.35.1.el6.x86_64", severity: rules.Warning, message: "older than 3.10, the oldest kernel interlink supports"},
	} {
		t.Run(c.release, func(t *testing.T) {
			fixturetest.Write(t, root, "/proc/sys/kernel/osrelease", c.release+"\n")
			if c.noErrors {
				fixturetest.Write(t, root, "/proc/self/mountstats", noErrorsColumn)
			} else {
				fixturetest.Write(t, root, "/proc/self/mountstats", mountstats)
			}
			bundle := filepath.Join(t.TempDir(), "node.tar.gz")
			for _, args := range [][]string{{"--root", root, "--collect", bundle}, {"--root", bundle}} {
				f := kernelFinding(t, args...)
				if c.noFinding {
					if f != nil {
						t.Fatalf("%v: unexpected finding %+v", args, f)
					}
					continue
				}
				if f == nil {
					t.Fatalf("%v: no KERNEL-FACILITIES finding", args)
				}
				if f.Severity != c.severity || f.Object != "kernel "+c.release || f.Evidence[0].Value != c.release ||
					f.Evidence[0].File != "/proc/sys/kernel/osrelease" {
					t.Errorf("%v: %s %q evidence %+v", args, f.Severity, f.Object, f.Evidence[0])
				}
				if !strings.Contains(f.Message, c.message) {
					t.Errorf("%v: message lacks %q: %s", args, c.message, f.Message)
				}
				got := named(f)
				for _, n := range c.names {
					if !strings.Contains(got, n) {
						t.Errorf("%v: does not name %s:\n%s", args, n, got)
					}
				}
				for _, n := range c.notNamed {
					if strings.Contains(got, n) {
						t.Errorf("%v: names %s:\n%s", args, n, got)
					}
				}
				if len(f.Evidence)-1 != len(c.names) {
					t.Errorf("%v: %d facilities named, want %d:\n%s", args, len(f.Evidence)-1, len(c.names), got)
				}
			}
		})
	}
}

// TestCheckKernelNoNFS: the mountstats errors column is not named where
// there are no NFS mounts to read (the Debian fixture's one removed).
func TestCheckKernelNoNFS(t *testing.T) {
	fixedClock(t)
	root := filepath.Join(t.TempDir(), "node")
	fixturetest.Copy(t, fixtures+"debian12-netplan", root)
	fixturetest.Write(t, root, "/proc/sys/kernel/osrelease", "4.18.0-553.el8_10.x86_64\n")
	fixturetest.Write(t, root, "/proc/self/mountinfo", "")
	fixturetest.Write(t, root, "/proc/self/mountstats", "")
	fixturetest.Write(t, root, "/etc/fstab", "")
	f := kernelFinding(t, "--root", root)
	if f == nil {
		t.Fatal("no KERNEL-FACILITIES finding")
	}
	if got := named(f); strings.Contains(got, "mountstats") || !strings.Contains(got, "pidfd_open") {
		t.Errorf("names:\n%s", got)
	}
	if f.Severity != rules.Info {
		t.Errorf("severity %s: every missing facility falls back or is a lab's", f.Severity)
	}
}

// withoutErrorsColumn is root's mountstats as a kernel before 5.3 writes it:
// per-op lines of 8 numbers, without the errors count.
func withoutErrorsColumn(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "proc/self/mountstats"))
	if err != nil {
		t.Fatal(err)
	}
	op := regexp.MustCompile(`(?m)^(\s+[A-Z_0-9]+:(?: \d+){8}) \d+$`)
	out := op.ReplaceAllString(string(b), "$1")
	if out == string(b) {
		t.Fatal("no per-op line of 9 numbers in the fixture's mountstats")
	}
	return out
}
