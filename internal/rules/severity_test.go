package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListedSeverities runs every fixture tree under testdata/nodes through
// the rules, as its roles.txt, platform.txt and interconnect.txt describe it
// and again with and without its roles on each platform, and holds each finding's
// severity against what its rule lists (what `check --rules` prints).
func TestListedSeverities(t *testing.T) {
	byID := map[string]Rule{}
	for _, r := range All() {
		byID[r.ID] = r
		for _, c := range r.Also {
			if c.Severity == r.Severity || c.When == "" {
				t.Errorf("%s: Also %+v repeats the rule's severity or says not when", r.ID, c)
			}
		}
	}
	ents, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	trees, findings := 0, 0
	emitted := map[string]bool{} // "RULE severity" seen on some fixture
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		trees++
		inv, given := loadNode(t, e.Name())
		if b, err := os.ReadFile(filepath.Join(fixtureDir, e.Name(), "interconnect.txt")); err == nil {
			given.Interconnect = strings.Fields(string(b))
		}
		cfgs := map[string]Config{"as given": *given}
		for _, p := range []Platform{Linux, Solaris, AIX, HPUX} {
			cfgs["no roles, "+string(p)] = Config{Platform: p, Interconnect: given.Interconnect}
			cfgs["roles, "+string(p)] = Config{Platform: p, Interconnect: given.Interconnect, MountRoles: given.MountRoles}
		}
		for name, cfg := range cfgs {
			for _, f := range Check(inv, cfg).Findings {
				findings++
				r, ok := byID[f.Rule]
				if !ok {
					t.Errorf("%s (%s): finding of unknown rule %q", e.Name(), name, f.Rule)
					continue
				}
				emitted[f.Rule+" "+f.Severity.String()] = true
				if !r.Emits(f.Severity) {
					t.Errorf("%s (%s): %s on %s is %s, but the rule lists %s", e.Name(), name, f.Rule, f.Object, f.Severity, r.SeverityText())
				}
			}
		}
	}
	if trees < 4 || findings == 0 {
		t.Fatalf("ran %d fixture trees with %d findings; fixtures missing?", trees, findings)
	}
	// The mismatches this test was written for stay covered: each rule
	// here emits both of its listed severities on the fixtures.
	for _, want := range []string{"NET-MTU-PERSIST critical", "NFS-PROTO-UDP warning", "NFS-RSIZE warning", "NFS-SOFT warning",
		"NFS-SOFT critical", "NFS-RSIZE critical", "NFS-INTR info", "NFS-INTR warning"} {
		if !emitted[want] {
			t.Errorf("no fixture emits %s any more; the listing check lost its coverage", want)
		}
	}
}
