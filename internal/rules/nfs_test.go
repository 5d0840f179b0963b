package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/inventory"
)

// want is one finding a case expects, with one piece of its evidence.
type want struct {
	rule, object string
	sev          Severity
	what, value  string // evidence: What and (a substring of) Value
	file         string // evidence File
}

func (w want) String() string { return fmt.Sprintf("%s %s %s", w.sev, w.rule, w.object) }

// matches reports whether f is the finding w describes, evidence included.
func (w want) matches(f Finding) bool {
	if f.Rule != w.rule || f.Object != w.object || f.Severity != w.sev {
		return false
	}
	for _, e := range f.Evidence {
		if e.What == w.what && strings.Contains(e.Value, w.value) && e.File == w.file {
			return true
		}
	}
	return false
}

// checkWants fails unless every want is among fs; with exact, fs must hold
// nothing else.
func checkWants(t *testing.T, fs []Finding, wants []want, exact bool) {
	t.Helper()
	used := make([]bool, len(fs))
	for _, w := range wants {
		found := false
		for i, f := range fs {
			if !used[i] && w.matches(f) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing finding %s with evidence %s=%q (%s)", w, w.what, w.value, w.file)
		}
	}
	for i, f := range fs {
		if f.Fix == "" || f.Source == "" || f.Message == "" || len(f.Evidence) == 0 {
			t.Errorf("%s %s: incomplete finding %+v", f.Rule, f.Object, f)
		}
		if exact && !used[i] {
			t.Errorf("unexpected finding %s %s %s: %s %+v", f.Severity, f.Rule, f.Object, f.Message, f.Evidence)
		}
	}
}

const (
	mi    = inventory.MountinfoFile
	fstab = inventory.FstabFile
)

var everythingWrong = []want{
	{"NFS-AC-DATAFILES", "mount /u02/oradata", Critical, "attribute cache", "attribute caching at defaults", mi},
	{"NFS-AC-DATAFILES", "mount /u03/redo", Critical, "attribute cache", "attribute caching at defaults", mi},
	{"NFS-FSTAB-SOLARIS-OPT", "mount /u03/redo", Critical, "option", "forcedirectio", fstab},
	{"NFS-NOAC-CRS", "mount /u04/crs", Critical, "attribute cache", "acregmin=0,acregmax=0,acdirmin=0,acdirmax=0", mi},
	{"NFS-PROTO-UDP", "mount /u02/oradata", Critical, "proto", "udp", mi},
	{"NFS-RSIZE", "mount /u02/oradata", Critical, "rsize", "8192", mi},
	{"NFS-SOFT", "mount /u02/oradata", Critical, "hard/soft", "soft", mi},
	{"NFS-BACKUP-NOAC", "mount /backup", Warning, "attribute cache", "noac", mi},
	{"NFS-NOSUID", "mount /u01/app/oracle", Warning, "mount flags", "rw,nosuid,relatime", mi},
	{"NFS-PROTO-UDP", "mount /mnt/oradata_copy", Warning, "proto", "udp", mi},
	{"NFS-RSIZE", "mount /mnt/oradata_copy", Warning, "wsize", "8192", mi},
	{"NFS-RUNTIME-VS-FSTAB", "mount /mnt/oradata_copy", Warning, "proto (table)", "tcp", fstab},
	{"NFS-RUNTIME-VS-FSTAB", "mount /u03/redo", Warning, "attribute cache (table)", "actimeo=0", fstab},
	{"NFS-SHARECACHE", "export nas01:/vol/oradata", Warning, "options of /u02/oradata", "rw,soft,intr,udp,rsize=8192,wsize=8192,vers=3", fstab},
	{"NFS-SOFT", "mount /mnt/oradata_copy", Warning, "hard/soft", "soft", mi},
	{"NFS-TIMEO", "mount /u01/app/oracle", Warning, "timeo", "50", mi},
	{"NFS-VERS", "mount /u04/crs", Warning, "vers", "4.0", mi},
	{"NFS-BG", "mount /u02/oradata", Info, "bg", "(not set)", fstab},
	{"NFS-INTR", "mount /u02/oradata", Info, "intr", "intr", fstab},
	{"NFS-NOAC-SYNC", "mount /mnt/stage area", Info, "noac", "noac", mi},
	{"NFS-NOT-MOUNTED", "mount /u05/arch", Info, "running mount table", "no entry for /u05/arch", mi},
}

func TestNFSFixtures(t *testing.T) {
	for _, tt := range []struct {
		node  string
		wants []want
	}{
		{"ol8-rac-bond-jumbo", nil},
		{"debian12-netplan", nil},
		{"ol7-everything-wrong", everythingWrong},
		{"solaris-nfs", []want{{"NFS-AC-HOME", "mount /u01/app/oracle", Warning, "attribute cache", "attribute caching at defaults", inventory.MnttabFile}}},
	} {
		t.Run(tt.node, func(t *testing.T) {
			inv, cfg := loadNode(t, tt.node)
			if len(inv.Mounts) == 0 {
				t.Fatal("no NFS mounts gathered")
			}
			// every role in roles.txt reached a mount, so silence means healthy
			for _, m := range nfsMounts(inv, cfg) {
				if want, ok := cfg.MountRoles[m.MountPoint]; ok && m.Role != want {
					t.Errorf("%s: role %q, want %q", m.MountPoint, m.Role, want)
				}
			}
			checkWants(t, nfsFindings(inv, cfg), tt.wants, true)
		})
	}
}

// treeCase is a small node tree written inline.
type treeCase struct {
	name     string
	platform Platform
	roles    map[string]Role
	files    map[string]string
	wants    []want
	silent   []string // rules that must not fire
	quiet    []string // objects nothing may fire on
}

var treeCases = []treeCase{
	{name: "solaris datafiles without forcedirectio", platform: Solaris,
		roles: map[string]Role{"/u02/oradata": RoleDatafiles},
		files: map[string]string{
			"etc/vfstab": "nas01:/vol/oradata\t-\t/u02/oradata\tnfs\t-\tyes\trw,bg,hard,nointr,rsize=32768,wsize=32768,proto=tcp,noac,vers=3\n",
			"etc/mnttab": "nas01:/vol/oradata\t/u02/oradata\tnfs\trw,bg,hard,nointr,rsize=32768,wsize=32768,proto=tcp,noac,vers=3,xattr,dev=9040002\t1712131230\n",
		},
		wants:  []want{{"NFS-FORCEDIRECTIO", "mount /u02/oradata", Warning, "forcedirectio", "(not set)", inventory.MnttabFile}},
		silent: []string{"NFS-AC-DATAFILES", "NFS-NOAC-SYNC", "NFS-INTR", "NFS-RUNTIME-VS-FSTAB"},
	},
	{name: "aix without noac and with intr", platform: AIX,
		roles: map[string]Role{"/u02/oradata": RoleDatafiles, "/u01/app/oracle": RoleHome},
		files: map[string]string{"etc/filesystems": `/u02/oradata:
	dev		= "/vol/oradata"
	vfs		= nfs
	nodename	= nas01
	mount		= true
	options		= rw,bg,hard,intr,rsize=65536,wsize=65536,timeo=600,proto=tcp,vers=3

/u01/app/oracle:
	dev		= "/vol/orahome"
	vfs		= nfs
	nodename	= nas01
	mount		= true
	options		= rw,bg,hard,nointr,rsize=65536,wsize=65536,timeo=600,proto=tcp,vers=3
`},
		wants: []want{
			{"NFS-AC-DATAFILES", "mount /u02/oradata", Critical, "attribute cache", "attribute caching at defaults", inventory.AIXFilesystems},
			{"NFS-INTR", "mount /u02/oradata", Warning, "intr", "intr", inventory.AIXFilesystems},
		},
		silent: []string{"NFS-AC-HOME", "NFS-NOT-MOUNTED"},
	},
	{name: "hp-ux datafiles with nosuid", platform: HPUX,
		roles: map[string]Role{"/u02/oradata": RoleDatafiles},
		files: map[string]string{
			"etc/fstab":  "nas01:/vol/oradata /u02/oradata nfs rw,bg,hard,nointr,rsize=32768,wsize=32768,proto=tcp,noac,forcedirectio,vers=3,nosuid 0 0\n",
			"etc/mnttab": "nas01:/vol/oradata /u02/oradata nfs rw,bg,hard,nointr,rsize=32768,wsize=32768,proto=tcp,noac,forcedirectio,vers=3,nosuid,dev=40000003 0 0 1712131230 0\n",
		},
		wants:  []want{{"NFS-NOSUID", "mount /u02/oradata", Warning, "nosuid", "nosuid", inventory.MnttabFile}},
		silent: []string{"NFS-FSTAB-SOLARIS-OPT", "NFS-FORCEDIRECTIO", "NFS-AC-DATAFILES"},
	},
	{name: "linux hand mounts, unset vers, NFSv2, unknown role path", platform: Linux,
		roles: map[string]Role{"/u02/oradata": RoleDatafiles, "/u01/app/oracle": RoleHome, "/u09/nothing": RoleRedo},
		files: map[string]string{
			"proc/self/mountinfo": "96 1 252:0 / / rw,relatime shared:1 - xfs /dev/mapper/ol-root rw,attr2,inode64,noquota\n" +
				"240 96 0:52 / /u02/oradata rw,relatime shared:126 - nfs nas01:/vol/oradata rw,vers=3,rsize=65536,wsize=65536,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,hard,proto=tcp,timeo=600,retrans=2,sec=sys,addr=10.0.0.1\n" +
				"241 96 0:53 / /old rw,relatime shared:127 - nfs oldnas:/export rw,vers=2,rsize=8192,wsize=8192,namlen=255,hard,proto=udp,timeo=11,retrans=3,sec=sys,addr=10.0.0.2\n",
			"etc/fstab": "nas01:/vol/orahome /u01/app/oracle nfs rw,bg,hard,nointr,rsize=65536,wsize=65536,proto=tcp,timeo=600 0 0\n" +
				"nas01:/vol/spare /spare nfs rw,bg,hard,proto=tcp,vers=3,noauto 0 0\n",
		},
		wants: []want{
			{"NFS-NOT-PERSISTED", "mount /u02/oradata", Info, "static table entry", "none", ""},
			{"NFS-VERS", "mount /old", Warning, "vers", "2", mi},
			{"NFS-VERS", "mount /u01/app/oracle", Warning, "vers", "(not set)", fstab},
			{"NFS-AC-HOME", "mount /u01/app/oracle", Warning, "attribute cache", "attribute caching at defaults", fstab},
			{"NFS-NOT-MOUNTED", "mount /u01/app/oracle", Info, "running mount table", "no entry", mi},
			{"NFS-ROLE-UNMATCHED", "mount role /u09/nothing", Warning, "--mount-role", "/u09/nothing=redo", ""},
		},
		silent: []string{"NFS-AC-DATAFILES", "NFS-RUNTIME-VS-FSTAB", "NFS-TIMEO"},
		quiet:  []string{"mount /spare"}, // noauto: not being mounted is intended
	},
}

// gatherFiles writes a node tree and gathers its inventory.
func gatherFiles(t *testing.T, files map[string]string) *inventory.Inventory {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gatherDir(t, dir)
}

func TestNFSTreeCases(t *testing.T) {
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			inv := gatherFiles(t, tc.files)
			fs := nfsFindings(inv, &Config{Platform: tc.platform, MountRoles: tc.roles})
			checkWants(t, fs, tc.wants, false)
			for _, f := range fs {
				if contains(tc.silent, f.Rule) || contains(tc.quiet, f.Object) {
					t.Errorf("%s fired on %s: %s", f.Rule, f.Object, f.Message)
				}
			}
		})
	}
}

// TestEveryNFSRuleHasACase keeps the promise that every NFS rule is shown
// firing, with evidence, by the fixture or inline cases above.
func TestEveryNFSRuleHasACase(t *testing.T) {
	covered := map[string]bool{}
	for _, w := range everythingWrong {
		covered[w.rule] = true
	}
	covered["NFS-AC-HOME"] = true // solaris-nfs fixture
	for _, tc := range treeCases {
		for _, w := range tc.wants {
			covered[w.rule] = true
		}
	}
	var missing []string
	for _, r := range All() {
		if strings.HasPrefix(r.ID, "NFS-") && !covered[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("NFS rules without a firing case: %v", missing)
	}
}

// TestRecommendedLineSatisfiesRules: the fix line each finding proposes,
// written into the platform's table, passes every NFS rule for that role.
func TestRecommendedLineSatisfiesRules(t *testing.T) {
	bad := "rw,soft,intr,udp,rsize=8192,wsize=8192,vers=4,timeo=11,noac,nosuid,forcedirectio,_netdev"
	for _, p := range []Platform{Linux, Solaris, AIX, HPUX} {
		t.Run(string(p), func(t *testing.T) {
			roles := map[string]Role{}
			var lines []string
			for _, r := range Roles {
				mp := "/m/" + string(r)
				roles[mp] = r
				lines = append(lines, tableLine(p, "nas:/vol/"+string(r), mp, bad))
			}
			file := tableFile(p)
			inv := gatherFiles(t, map[string]string{file: strings.Join(lines, "\n") + "\n"})
			cfg := &Config{Platform: p, MountRoles: roles}
			if len(nfsFindings(inv, cfg)) == 0 {
				t.Fatal("the bad table drew no findings")
			}
			var fixed []string
			for _, m := range nfsMounts(inv, cfg) {
				l := recommendedLine(m, p)
				if p == AIX {
					l = tableLine(p, m.Device, m.MountPoint, strings.TrimSpace(strings.SplitN(l, "=", 2)[1]))
				}
				fixed = append(fixed, l)
			}
			inv = gatherFiles(t, map[string]string{file: strings.Join(fixed, "\n") + "\n"})
			if len(inv.Mounts) != len(Roles) {
				t.Fatalf("fixed table has %d mounts, want %d:\n%s", len(inv.Mounts), len(Roles), strings.Join(fixed, "\n"))
			}
			for _, f := range nfsFindings(inv, cfg) {
				t.Errorf("after the fix: %s %s %s: %s", f.Severity, f.Rule, f.Object, f.Message)
			}
			if p == Linux && !strings.Contains(fixed[0], "_netdev") {
				t.Errorf("fix dropped the admin's _netdev: %s", fixed[0])
			}
		})
	}
}

func tableFile(p Platform) string {
	switch p {
	case Solaris:
		return "etc/vfstab"
	case AIX:
		return "etc/filesystems"
	}
	return "etc/fstab"
}

func tableLine(p Platform, dev, mp, opts string) string {
	switch p {
	case Solaris:
		return fmt.Sprintf("%s - %s nfs - yes %s", dev, mp, opts)
	case AIX:
		host, export, _ := strings.Cut(dev, ":")
		return fmt.Sprintf("%s:\n\tdev = %q\n\tvfs = nfs\n\tnodename = %s\n\toptions = %s\n", mp, export, host, opts)
	}
	return fmt.Sprintf("%s %s nfs %s 0 0", dev, mp, opts)
}

func TestMountRoleMatching(t *testing.T) {
	inv := &inventory.Inventory{}
	for _, mp := range []string{"/u02/oradata1", "/u02/redo", "/u05/arch", "/u06", "/u06/deeper", "/x"} {
		inv.Mounts = append(inv.Mounts, inventory.Mount{MountPoint: mp})
	}
	cfg := &Config{MountRoles: map[string]Role{
		"/u02":                 RoleDatafiles, // covers /u02/oradata1
		"/u02/redo":            RoleRedo,      // longer path wins
		"/u05/arch/PROD":       RoleBackup,    // a directory inside the mount
		"/u06/deeper/sub":      RoleHome,      // inside the deepest containing mount only
		"/u06/data":            RoleOther,     // inside /u06
		"/u06/data2":           RoleCRS,       // two paths inside one mount: the stricter role
		"/x/y":                 RoleBackup,
		"/x":                   RoleOther, // an exact or covering path beats one inside
		"/nowhere/at/all/here": RoleCRS,
	}}
	got := map[string]Role{}
	for _, m := range nfsMounts(inv, cfg) {
		got[m.MountPoint] = m.Role
	}
	want := map[string]Role{"/u02/oradata1": RoleDatafiles, "/u02/redo": RoleRedo, "/u05/arch": RoleBackup,
		"/u06": RoleCRS, "/u06/deeper": RoleHome, "/x": RoleOther}
	for mp, r := range want {
		if got[mp] != r {
			t.Errorf("%s: role %q, want %q", mp, got[mp], r)
		}
	}
	var unmatched []string
	for _, f := range checkRoleUnmatched(inv, cfg) {
		unmatched = append(unmatched, f.Object)
	}
	sort.Strings(unmatched)
	if strings.Join(unmatched, ",") != "mount role /nowhere/at/all/here" {
		t.Errorf("unmatched = %v", unmatched)
	}
}

// TestNFSGuideListsNFSRules keeps the rule table of the NFS guide
// (docs/guides/nfs.md) complete.
func TestNFSGuideListsNFSRules(t *testing.T) {
	const guide = "../../docs/guides/nfs.md"
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range All() {
		if strings.HasPrefix(r.ID, "NFS-") && !strings.Contains(string(b), "| `"+r.ID+"` |") {
			t.Errorf("%s has no row for %s", guide, r.ID)
		}
	}
}
