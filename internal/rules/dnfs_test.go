package rules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/inventory"
)

const (
	dnfsTree   = fixtureDir + "/ol8-dnfs"
	home19     = "/u01/app/oracle/product/19.0.0/dbhome_1"
	home12     = "/u01/app/oracle/product/12.2.0/dbhome_1"
	goodNFSTab = `# orcl: two storage networks to nas01, each from its own interface
server: nas01
local: 10.20.1.11 path: 10.20.1.21
local: 10.20.2.11 path: 10.20.2.21
dontroute
nfs_version: nfsv3
export: /vol/oradata mount: /u02/oradata
export: /vol/redo mount: /u03/redo
`
)

// dnfsFindings runs the DNFS rules only, as "RULE object line..." keys.
func dnfsFindings(inv *inventory.Inventory, cfg Config) []Finding {
	var out []Finding
	for _, f := range Check(inv, cfg).Findings {
		if strings.HasPrefix(f.Rule, "DNFS-") {
			out = append(out, f)
		}
	}
	return out
}

func ruleIDs(fs []Finding) string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule)
	}
	sort.Strings(ids)
	return strings.Join(ids, " ")
}

// The captured tree's 19c home carries one broken oranfstab line per rule,
// its 12.2 home an oranfstab with dNFS off, and /etc/oranfstab a good entry.
func TestDNFSRulesBrokenTree(t *testing.T) {
	inv, _ := loadNode(t, "ol8-dnfs")
	fs := dnfsFindings(inv, Config{StorageMTU: 9000})
	want := "DNFS-DUP-MOUNT DNFS-LOCAL-ABSENT DNFS-MOUNT DNFS-MTU DNFS-NFS-VERSION DNFS-OFF DNFS-ONE-INTERFACE DNFS-PAIRS DNFS-SYNTAX DNFS-UID-ZERO"
	if got := ruleIDs(fs); got != want {
		t.Fatalf("rules fired:\n got %s\nwant %s", got, want)
	}
	line := map[string]string{ // rule -> evidence of the line it must quote
		"DNFS-LOCAL-ABSENT":  "oranfstab line 5 = local: 10.20.3.11",
		"DNFS-MOUNT":         "oranfstab line 11 = export: /vol/redo2 mount: /u05/redo",
		"DNFS-NFS-VERSION":   "oranfstab line 7 = nfs_version: nfsv4.1",
		"DNFS-UID-ZERO":      "oranfstab line 8 = uid: 0",
		"DNFS-SYNTAX":        "oranfstab line 9 = colour: blue",
		"DNFS-ONE-INTERFACE": "oranfstab line 6 = path: 10.20.1.22",
		"DNFS-DUP-MOUNT":     "oranfstab line 12 = server: nas01 export: /vol/oradata mount: /u02/oradata",
	}
	for _, f := range fs {
		if f.Fix == "" || f.Source == "" || len(f.Evidence) == 0 {
			t.Errorf("%s without fix, source or evidence: %+v", f.Rule, f)
		}
		if w, ok := line[f.Rule]; ok {
			var evs []string
			for _, e := range f.Evidence {
				evs = append(evs, e.What+" = "+e.Value)
			}
			if !strings.Contains(strings.Join(evs, "\n"), w) {
				t.Errorf("%s evidence %q, want %q", f.Rule, evs, w)
			}
		}
		if f.Rule == "DNFS-OFF" && f.Object != "Oracle home "+home12 {
			t.Errorf("DNFS-OFF on %s", f.Object)
		}
		if f.Rule == "DNFS-MTU" && !strings.Contains(f.Evidence[2].What, "10.20.3.21 by route 0.0.0.0/0 dev eth0") {
			t.Errorf("DNFS-MTU does not say the third path leaves by the default route: %+v", f.Evidence)
		}
	}
	// /etc/oranfstab (nas02, dontroute, one local per interface) is good.
	for _, f := range fs {
		if strings.Contains(f.Object, "nas02") {
			t.Errorf("finding on the good /etc/oranfstab: %+v", f)
		}
	}
	d := inv.DNFS
	if len(d.Homes) != 3 || d.Homes[1].DNFS != inventory.DNFSOn || d.Homes[2].DNFS != inventory.DNFSOff || !d.Homes[0].Grid() {
		t.Errorf("homes %+v", d.Homes)
	}
	eff := d.Effective(1)
	if len(eff) != 3 || eff[0].Mount != "/u02/oradata" || len(eff[0].Shadowed) != 1 || eff[2].File != inventory.EtcOranfstab {
		t.Errorf("effective entries %+v", eff)
	}
}

// editTree applies node-path -> content edits ("" removes the file) to
// root, a copy of the dNFS tree, gathers it, and undoes the edits from the
// fixture when the (sub)test ends: one copy serves every case, as copying
// the tree's 299 files per case took most of the test's time.
func editTree(t *testing.T, root string, files map[string]string) *inventory.Inventory {
	t.Helper()
	for p, c := range files {
		t.Cleanup(func() { restore(t, root, p) })
		if c == "" {
			if err := os.Remove(filepath.Join(root, p)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fixturetest.Write(t, root, p, c)
	}
	return gatherDir(t, root)
}

// restore puts node path p under root back as the dNFS fixture has it
// (0644, as fixturetest.Copy writes), or removes it where the fixture has none.
func restore(t *testing.T, root, p string) {
	b, err := os.ReadFile(filepath.Join(dnfsTree, p))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Remove(filepath.Join(root, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Error(err)
		}
	case err != nil:
		t.Error(err)
	default:
		if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

func TestDNFSRulesGoodAndBroken(t *testing.T) {
	good := map[string]string{home19 + "/dbs/oranfstab": goodNFSTab, home12 + "/dbs/oranfstab": ""}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tab := home19 + "/dbs/oranfstab"
	root := t.TempDir()
	fixturetest.Copy(t, dnfsTree, root)
	for _, tc := range []struct {
		name  string
		files map[string]string
		cfg   Config
		want  string
	}{
		{"good", good, Config{StorageMTU: 9000}, ""},
		{"storage mtu expected 1500", good, Config{StorageMTU: 1500}, "DNFS-MTU DNFS-MTU"},
		{"one interface at 1500", with("/sys/class/net/eth4/mtu", "1500\n"), Config{}, "DNFS-MTU DNFS-MTU"},
		{"five paths", with(tab, goodNFSTab+"path: 10.20.1.31\npath: 10.20.1.32\npath: 10.20.1.33\n"), Config{}, "DNFS-ONE-INTERFACE DNFS-PAIRS DNFS-PATHS-MAX"},
		{"no dontroute, same subnet", with(tab, strings.ReplaceAll(goodNFSTab, "dontroute\n", "")+"local: 10.20.1.11 path: 10.20.1.23\n"), Config{}, "DNFS-ONE-INTERFACE"},
		{"dontroute, locals on one interface", with(tab, strings.Replace(goodNFSTab, "local: 10.20.2.11", "local: 10.20.1.11", 1)), Config{}, "DNFS-ONE-INTERFACE"},
		{"gid 0", with(tab, goodNFSTab+"gid: 0\n"), Config{}, "DNFS-UID-ZERO"},
		{"pnfs on a v3 mount", with(tab, strings.Replace(goodNFSTab, "nfsv3", "pnfs", 1)), Config{}, "DNFS-NFS-VERSION DNFS-NFS-VERSION"},
		{"dnfs off with oranfstab", with(home19+"/rdbms/lib/odm/libnfsodm19.so", ""), Config{}, "DNFS-OFF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := editTree(t, root, tc.files)
			if got := ruleIDs(dnfsFindings(inv, tc.cfg)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// 11g switched dNFS on by making lib/libodm11.so a link to libnfsodm11.so.
func TestDNFSStateEleven(t *testing.T) {
	root := t.TempDir()
	fixturetest.Copy(t, dnfsTree, root)
	h := filepath.Join(root, "u01/app/oracle/product/11.2.0/dbhome_1")
	fixturetest.Write(t, root, "/u01/app/oracle/product/11.2.0/dbhome_1/lib/libnfsodm11.so", "stand-in\n")
	fixturetest.Write(t, root, "/u01/app/oracle/product/11.2.0/dbhome_1/lib/libodmd11.so", "stand-in\n")
	if err := os.Symlink("libnfsodm11.so", filepath.Join(h, "lib/libodm11.so")); err != nil {
		t.Fatal(err)
	}
	fixturetest.Write(t, root, "/etc/oratab", "old:/u01/app/oracle/product/11.2.0/dbhome_1:N\n")
	inv := gatherDir(t, root)
	if hs := inv.DNFS.Homes; len(hs) != 1 || hs[0].DNFS != inventory.DNFSOn || !strings.Contains(hs[0].DNFSDetail, "libodm11.so -> libnfsodm11.so") {
		t.Errorf("11g home: %+v", hs)
	}
	os.Remove(filepath.Join(h, "lib/libodm11.so"))
	os.Symlink("libodmd11.so", filepath.Join(h, "lib/libodm11.so"))
	inv = gatherDir(t, root)
	if hs := inv.DNFS.Homes; hs[0].DNFS != inventory.DNFSOff {
		t.Errorf("11g home with the stub linked: %+v", hs)
	}
}
