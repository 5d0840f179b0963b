package inventory

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A Direct NFS configuration as Oracle's installation guide shows it, with
// two servers, four paths on the first, dontroute and per-export security.
const goodOranfstab = `# Direct NFS for the RAC datafiles
server: filer1
local: 192.168.50.10
path: 192.168.50.20
local: 192.168.51.10
path: 192.168.51.20
local: 192.168.52.10
path: 192.168.52.20
local: 192.168.53.10
path: 192.168.53.20
dontroute
nfs_version: nfsv3
export: /vol/oradata mount: /u02/oradata
export: /vol/redo mount: /u03/redo security: krb5p
mnt_timeout: 600

server: filer2   # the backup filer
local: ora1-stor
path: filer2-stor
export: /vol/backup mount: /backup
management: 10.0.0.5
`

func TestParseOranfstab(t *testing.T) {
	tab, err := ParseOranfstab(strings.NewReader(goodOranfstab), "/etc/oranfstab")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Problems) != 0 {
		t.Fatalf("problems in a good file: %+v", tab.Problems)
	}
	if len(tab.Servers) != 2 {
		t.Fatalf("%d servers", len(tab.Servers))
	}
	f1 := tab.Servers[0]
	if f1.Name != "filer1" || f1.Line != 2 || len(f1.Locals) != 4 || len(f1.Paths) != 4 || !f1.Dontroute {
		t.Errorf("filer1 = %+v", f1)
	}
	if f1.Paths[3] != (DNFSValue{"192.168.53.20", 10}) || f1.NFSVersion.Value != "nfsv3" || f1.MountTimeout.Value != "600" {
		t.Errorf("filer1 values: %+v %+v", f1.Paths[3], f1.NFSVersion)
	}
	if f1.Exports[1] != (DNFSExport{Export: "/vol/redo", Mount: "/u03/redo", Security: "krb5p", Line: 14}) {
		t.Errorf("export = %+v", f1.Exports[1])
	}
	f2 := tab.Servers[1]
	if f2.Name != "filer2" || f2.Dontroute || f2.Locals[0].Value != "ora1-stor" || len(f2.Management) != 1 {
		t.Errorf("filer2 = %+v", f2)
	}
}

func TestParseOranfstabProblems(t *testing.T) {
	const bad = `local: 10.0.0.1
server: f
path 10.0.0.2
colour: blue
nfs_version: nfsv5
export: /vol/a
export: /vol/b mount: /b security: rot13
mount: /c
mnt_timeout: soon
uid: root
server:
`
	tab, err := ParseOranfstab(strings.NewReader(bad), "x")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		1:  "local: before any server: entry",
		3:  "not an attribute",
		4:  `unknown attribute "colour"`,
		5:  `nfs_version "nfsv5"`,
		6:  "export /vol/a has no mount:",
		7:  `security "rot13"`,
		8:  "belongs on an export: line",
		9:  `mnt_timeout "soon"`,
		10: `uid "root"`,
		11: "server: without a name",
	}
	got := map[int]string{}
	for _, p := range tab.Problems {
		got[p.Line] = p.Problem
	}
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("line %d: problem %q, want %q", line, got[line], w)
		}
	}
	if len(tab.Problems) != len(want) {
		t.Errorf("%d problems, want %d: %+v", len(tab.Problems), len(want), tab.Problems)
	}
}

func TestParseOratab(t *testing.T) {
	const oratab = `# This file is used by ORACLE utilities.
+ASM1:/u01/app/19.0.0/grid:N
ORCL1:/u01/app/oracle/product/19.0.0/dbhome_1/:N
TEST:/u01/app/oracle/product/19.0.0/dbhome_1:Y
garbage line
`
	es, err := ParseOratab(strings.NewReader(oratab))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[1].Home != "/u01/app/oracle/product/19.0.0/dbhome_1" || es[2].Startup != "Y" || es[0].Line != 2 {
		t.Errorf("entries %+v", es)
	}
	if h := OracleHomes(es); len(h) != 2 || h[0] != "/u01/app/19.0.0/grid" {
		t.Errorf("homes %v", h)
	}
}

// FuzzParseOranfstab: any input parses without error from a reader that
// works, and every problem names a line that exists.
func FuzzParseOranfstab(f *testing.F) {
	f.Add(goodOranfstab)
	f.Add("server: a\nexport: /x mount:")
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseOranfstab(strings.NewReader(s), "f")
		if err != nil {
			if !strings.Contains(err.Error(), "token too long") {
				t.Fatal(err)
			}
			return
		}
		lines := strings.Count(s, "\n") + 1
		for _, p := range tab.Problems {
			if p.Line < 1 || p.Line > lines {
				t.Fatalf("problem on line %d of %d", p.Line, lines)
			}
		}
		for _, sv := range tab.Servers {
			if sv.Name == "" {
				t.Fatal("a server without a name")
			}
		}
	})
}

// Oracle's installation guide writes local: and path: on one line, and
// others write path:ADDR without a space; both pair up the same.
func TestParseOranfstabPairsOnOneLine(t *testing.T) {
	const doc = `server: MyDataServer1
local: 192.0.2.0 path: 192.0.2.1
local:192.0.100.0   path:192.0.100.1
path: fe80::1
export: /vol/oradata1 mount: /mnt/oradata1
local: 10.0.0.1 10.0.0.2
`
	tab, err := ParseOranfstab(strings.NewReader(doc), "x")
	if err != nil {
		t.Fatal(err)
	}
	s := tab.Servers[0]
	if len(s.Locals) != 2 || len(s.Paths) != 3 || s.Locals[1] != (DNFSValue{"192.0.100.0", 3}) || s.Paths[1] != (DNFSValue{"192.0.100.1", 3}) || s.Paths[2].Value != "fe80::1" {
		t.Errorf("locals %+v paths %+v", s.Locals, s.Paths)
	}
	if len(s.Exports) != 1 || s.Exports[0].Mount != "/mnt/oradata1" {
		t.Errorf("exports %+v", s.Exports)
	}
	if len(tab.Problems) != 1 || tab.Problems[0].Line != 6 || !strings.Contains(tab.Problems[0].Problem, "one value per local:") {
		t.Errorf("problems %+v", tab.Problems)
	}
}

// A bundle keeps what Direct NFS was judged on: the oratab, each home's
// oranfstab, and the libraries whose presence decides dNFS on or off (as
// placeholders, never their content).
func TestDNFSBundle(t *testing.T) {
	inv, src := gatherFixture(t, fixtures+"ol8-dnfs")
	bundle := filepath.Join(t.TempDir(), "b.tar.gz")
	f, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Collect(f, fixedNow()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	again, bsrc := gatherFixture(t, bundle)
	if !reflect.DeepEqual(inv.DNFS, again.DNFS) {
		t.Errorf("dNFS from the bundle differs:\n%+v\n%+v", inv.DNFS, again.DNFS)
	}
	b, err := bsrc.ReadFile("/u01/app/oracle/product/19.0.0/dbhome_1/rdbms/lib/odm/libnfsodm19.so")
	if err != nil || string(b) != PresentNote {
		t.Errorf("library in the bundle: %q, %v", b, err)
	}
}
