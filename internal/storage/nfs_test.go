package storage

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/rules"
)

// The NFS part of a run comes from two node trees, before and after (the
// fixtures under testdata/mountstats: this kernel has no NFS client).
func TestNFSReportFromFixtures(t *testing.T) {
	root := "../../testdata/mountstats/"
	for _, tc := range []struct {
		dir, mp                    string
		profile                    Profile
		getattr, write, commit     uint64
		wantRule, wantText, noRule string
	}{
		// actimeo=0 is what a shared home wants; an install role finds no AC rule.
		{"el8-nfs3-actimeo0", "/u01/app/oracle", Install, 8020, 3177, 2000, "", "COMMIT 2000", "NFS-AC-HOME"},
		// The same mount judged as a backup destination: actimeo=0 is wrong there.
		{"el8-nfs3-actimeo0", "/u01/app/oracle", Backup, 8020, 3177, 2000, "NFS-BACKUP-NOAC", "GETATTR 8020", ""},
		// noac for datafiles: allowed; the retransmissions are called out.
		{"el9-nfs41-noac", "/u02/oradata", Mkfile, 8195, 8192, 0, "", "12 retransmissions, 2 major timeouts", "NFS-AC-DATAFILES"},
	} {
		before, after := nfsMount(root+tc.dir+"/before", tc.mp), nfsMount(root+tc.dir+"/after", tc.mp)
		n := NFSReport(before, after, ProfileRole[tc.profile])
		if n == nil || n.Delta == nil {
			t.Fatalf("%s: report %+v", tc.dir, n)
		}
		d := n.Delta
		if d.Op("GETATTR").Requests != tc.getattr || d.Op("WRITE").Requests != tc.write || d.Op("COMMIT").Requests != tc.commit {
			t.Errorf("%s: delta %+v", tc.dir, d.Ops)
		}
		if !strings.Contains(n.Options, "acregmin=0") || n.Device == "" {
			t.Errorf("%s: options %q device %q", tc.dir, n.Options, n.Device)
		}
		has := func(id string) bool {
			for _, f := range n.Findings {
				if f.Rule == id {
					return true
				}
			}
			return false
		}
		if tc.wantRule != "" && !has(tc.wantRule) || tc.noRule != "" && has(tc.noRule) {
			t.Errorf("%s %s: findings %+v", tc.dir, tc.profile, n.Findings)
		}
		var b bytes.Buffer
		WriteText(&b, &Result{Spec: Spec{Path: tc.mp, Profile: tc.profile}, NFS: n})
		if !strings.Contains(squeeze(b.String()), tc.wantText) || !strings.Contains(b.String(), "check (role "+string(ProfileRole[tc.profile])) {
			t.Errorf("%s: text lacks %q:\n%s", tc.dir, tc.wantText, b.String())
		}
	}
	// The other mount of the same node did nothing: its delta is empty.
	n := NFSReport(nfsMount(root+"el8-nfs3-actimeo0/before", "/backup"), nfsMount(root+"el8-nfs3-actimeo0/after", "/backup"), rules.RoleBackup)
	if n == nil || n.Delta == nil || len(n.Delta.Ops) != 0 {
		t.Errorf("/backup: %+v", n)
	}
	// Readings swapped are a remount: said, not a wrapped number.
	n = NFSReport(nfsMount(root+"el9-nfs41-noac/after", "/u02/oradata"), nfsMount(root+"el9-nfs41-noac/before", "/u02/oradata"), rules.RoleDatafiles)
	if n.Delta != nil || !strings.Contains(n.DeltaError, "remounted") {
		t.Errorf("swapped: %+v", n)
	}
	if nfsMount(root+"el9-nfs41-noac/after", "/u01") != nil {
		t.Errorf("a mount point that is not mounted was found")
	}
}

// squeeze folds runs of spaces, so a test can name a table row.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// Per-op errors by the kernel's layout: a UEK5 (4.14) or OL8 (4.18) node
// prints 8 numbers per operation and has no error count (absent in JSON,
// "n/a" in text, never 0); an OL9 (5.14) node prints a 9th, the errors.
func TestNFSOpErrorsByKernelLayout(t *testing.T) {
	root := "../../testdata/mountstats/"
	for _, tc := range []struct {
		dir, mp string
		role    rules.Role
		row     string // the WRITE row of the text table
		errors  bool
	}{
		{"ol7-uek5-nfs3-oradata", "/u02/oradata", rules.RoleDatafiles, "WRITE 8192 2 1 66880 960 4.00ms 4.40ms n/a", false},
		{"el8-nfs3-actimeo0", "/u01/app/oracle", rules.RoleHome, "WRITE 3177 3 1 128390 446 2.00ms 2.20ms n/a", false},
		{"el9-nfs41-noac", "/u02/oradata", rules.RoleDatafiles, "WRITE 8192", true},
	} {
		n := NFSReport(nfsMount(root+tc.dir+"/before", tc.mp), nfsMount(root+tc.dir+"/after", tc.mp), tc.role)
		if n == nil || n.Delta == nil {
			t.Fatalf("%s: report %+v", tc.dir, n)
		}
		b, err := json.Marshal(n.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"errors":`); got != tc.errors {
			t.Errorf("%s: errors in the JSON: %v, want %v: %s", tc.dir, got, tc.errors, b)
		}
		var text bytes.Buffer
		WriteText(&text, &Result{Spec: Spec{Path: tc.mp, Profile: Mkfile}, NFS: n})
		out := squeeze(text.String())
		if !strings.Contains(out, tc.row) || strings.Contains(out, " n/a ") == tc.errors {
			t.Errorf("%s: text lacks %q (or has n/a: %v):\n%s", tc.dir, tc.row, !tc.errors, text.String())
		}
	}
}
