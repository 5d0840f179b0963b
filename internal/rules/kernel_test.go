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
		{name: "seccomp refuses pidfd_open", release: "6.1.0-27-amd64",
			probed:   map[string]bool{"thread-self": true, "pidfd-open": false, "udp-gso": true},
			severity: Info, want: []string{"pidfd_open(2), Linux 5.3 (probed: absent)"}},
		{name: "TCP_INFO short on a new release", release: "5.15.0-200.131.27.el9uek.x86_64",
			probed:   map[string]bool{"tcpinfo-min-rtt": false},
			severity: Warning, want: []string{"tcpi_min_rtt and tcpi_notsent_bytes, Linux 4.6 (probed: absent)"}},
		{name: "everything there", release: "6.1.0-27-amd64", probed: map[string]bool{"pidfd-open": true}},
		{name: "no release", release: ""},
		{name: "garbage release", release: "garbage", probed: map[string]bool{"pidfd-open": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := &inventory.Inventory{Node: inventory.Node{Kernel: c.release, Facilities: c.probed}}
			if c.nfs {
				inv.Mounts = []inventory.Mount{{MountPoint: "/u02", FSType: "nfs", Mounted: true}}
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
