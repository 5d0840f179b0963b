package rules

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/inventory"
)

// TestKernelFacilitiesProbed: on a live node the probes decide over the
// release, both ways: a backported facility is not named, one refused
// (a seccomp filter) is named although the release has it.
func TestKernelFacilitiesProbed(t *testing.T) {
	for _, c := range []struct {
		name     string
		release  string
		probed   map[string]bool
		nfs      bool
		stats    *inventory.MountStats // the NFS mount's, with nfs
		severity Severity
		want     []string // evidence lines (after the release), in order
		note     bool     // the message says a backport may be there
	}{
		{name: "RHEL 8 with backports", release: "4.18.0-553.el8_10.x86_64",
			probed:   map[string]bool{"thread-self": true, "tcpinfo-bytes-acked": true, "tcpinfo-min-rtt": true, "udp-gso": true, "pidfd-open": true},
			severity: Info, want: []string{"__sk_buff.gso_size, Linux 5.7 (by its release)"}, note: true},
		{name: "RHEL 8 with NFS, no probes (a bundle)", release: "4.18.0-553.el8_10.x86_64", nfs: true,
			severity: Warning, want: []string{"pidfd_open(2), Linux 5.3 (by its release)", "mountstats per-operation errors column, Linux 5.3 (by its release)",
				"__sk_buff.gso_size, Linux 5.7 (by its release)"}, note: true},
		{name: "RHEL 8 with NFS, errors column in its mountstats", release: "4.18.0-553.el8_10.x86_64", nfs: true,
			stats:    &inventory.MountStats{Ops: []inventory.OpStats{{Op: "READ", Errors: new(uint64)}}},
			severity: Info, want: []string{"pidfd_open(2), Linux 5.3 (by its release)", "__sk_buff.gso_size, Linux 5.7 (by its release)"}, note: true},
		{name: "6.1 with NFS, mountstats without the errors column", release: "6.1.0-27-amd64", nfs: true,
			stats:    &inventory.MountStats{Ops: []inventory.OpStats{{Op: "READ"}}},
			severity: Warning, want: []string{"mountstats per-operation errors column, Linux 5.3 (/proc/self/mountstats: per-op lines of 8 numbers)"}},
		{name: "seccomp refuses pidfd_open", release: "6.1.0-27-amd64",
			probed:   map[string]bool{"thread-self": true, "pidfd-open": false, "udp-gso": true},
			severity: Info, want: []string{"pidfd_open(2), Linux 5.3 (probed: absent)"}},
		{name: "TCP_INFO short on a new release", release: "5.15.0-200.131.27.el9uek.x86_64",
			probed:   map[string]bool{"tcpinfo-min-rtt": false},
			severity: Warning, want: []string{"tcpi_min_rtt and tcpi_notsent_bytes, Linux 4.6 (probed: absent)"}},
		{name: "everything there", release: "6.1.0-27-amd64", probed: map[string]bool{"pidfd-open": true}},
		{name: "no release", release: ""},
		{name: "garbage release, a probe absent", release: "garbage", probed: map[string]bool{"pidfd-open": false, "udp-gso": true},
			severity: Info, want: []string{"pidfd_open(2), Linux 5.3 (probed: absent)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := &inventory.Inventory{Node: inventory.Node{Kernel: c.release, Facilities: c.probed}}
			if c.nfs {
				inv.Mounts = []inventory.Mount{{MountPoint: "/u02", FSType: "nfs", Mounted: true, Stats: c.stats}}
			}
			fs := checkKernelFacilities(inv, &Config{})
			if len(c.want) == 0 {
				if len(fs) != 0 {
					t.Fatalf("unexpected finding %+v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1", len(fs))
			}
			f := fs[0]
			if f.Severity != c.severity || len(f.Evidence) != len(c.want)+1 {
				t.Fatalf("%s with %d evidence lines, want %s and %d: %+v", f.Severity, len(f.Evidence), c.severity, len(c.want)+1, f.Evidence)
			}
			for i, w := range c.want {
				if !strings.Contains(f.Evidence[i+1].What, w) {
					t.Errorf("evidence %d is %q, want %q", i+1, f.Evidence[i+1].What, w)
				}
			}
			if strings.Contains(f.Message, "may be there") != c.note {
				t.Errorf("backport note %v, want %v: %s", !c.note, c.note, f.Message)
			}
		})
	}
}

// TestKernelReleaseUnreadOrUnsupported: a release that cannot be read is
// said to be so (not passed over in silence), and one older than 3.10
// (Oracle Linux 6, SLES 11) is a warning that interlink does not support
// it, not a list of fallbacks with "nothing on the node is wrong".
func TestKernelReleaseUnreadOrUnsupported(t *testing.T) {
	for _, c := range []struct {
		release  string
		severity Severity
		want     []string // in the message
		notWant  []string
	}{
		{release: "garbage", severity: Info, want: []string{"not one interlink can read", "probes it at run time"}, notWant: []string{"probed here"}},
		{release: strings.Repeat("x", 5000), severity: Info, want: []string{"not one interlink can read"}},
		{release: "2.6.32-754.35.1.el6.x86_64", severity: Warning,
			want:    []string{"older than 3.10", "not supported", "recvmmsg(2) (2.6.33)", "sendmmsg(2) (3.0)", "/proc/thread-self (3.17)"},
			notWant: []string{"nothing on the node is wrong"}},
		{release: "3.0.101-63-default", severity: Warning, want: []string{"Linux 3.0.101 is older than 3.10", "/proc/thread-self"}, notWant: []string{"sendmmsg", "recvmmsg"}},
	} {
		inv := &inventory.Inventory{Node: inventory.Node{Kernel: c.release}}
		fs := checkKernelFacilities(inv, &Config{})
		if len(fs) != 1 {
			t.Fatalf("%.20s: %d findings, want 1", c.release, len(fs))
		}
		f := fs[0]
		if f.Severity != c.severity || len(f.Object) > 100 || f.Evidence[0].What != "kernel release" {
			t.Errorf("%.20s: %s %q %+v", c.release, f.Severity, f.Object, f.Evidence)
		}
		for _, w := range c.want {
			if !strings.Contains(f.Message, w) {
				t.Errorf("%.20s: message lacks %q: %s", c.release, w, f.Message)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(f.Message+f.Fix, w) {
				t.Errorf("%.20s: message has %q: %s / %s", c.release, w, f.Message, f.Fix)
			}
		}
	}
}
