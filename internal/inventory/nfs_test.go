package inventory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseMountOptions(t *testing.T) {
	sec := func(n int) *time.Duration { d := time.Duration(n) * time.Second; return &d }
	tests := []struct {
		raw  string
		want MountOptions
		off  bool // AttrCacheOff
	}{
		{raw: "rw,bg,hard,nointr,rsize=32768,wsize=32768,tcp,actimeo=0,vers=3,timeo=600",
			want: MountOptions{Vers: "3", Proto: "tcp", RsizeBytes: 32768, WsizeBytes: 32768, Timeo: 60 * time.Second,
				Actimeo: sec(0), ACRegMin: sec(0), ACRegMax: sec(0), ACDirMin: sec(0), ACDirMax: sec(0), Intr: "nointr", Bg: true},
			off: true},
		// mountinfo's spelling of actimeo=0
		{raw: "rw,vers=3,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,hard,proto=tcp",
			want: MountOptions{Vers: "3", Proto: "tcp", ACRegMin: sec(0), ACRegMax: sec(0), ACDirMin: sec(0), ACDirMax: sec(0)},
			off:  true},
		// a later acregmin overrides what actimeo set: caching is back on
		{raw: "actimeo=0,acregmax=30", want: MountOptions{Actimeo: sec(0), ACRegMin: sec(0), ACRegMax: sec(30), ACDirMin: sec(0), ACDirMax: sec(0)}},
		{raw: "rw,sync,noac,hard", want: MountOptions{NoAC: true, Sync: true}, off: true},
		{raw: "nfsvers=4,minorversion=1,udp,softerr", want: MountOptions{Vers: "4.1", Proto: "udp", Soft: true}},
		{raw: "soft,hard,intr,nointr,fg,bg,nosharecache,nosuid,forcedirectio", want: MountOptions{Intr: "nointr", Bg: true, NoShareCache: true, NoSuid: true, ForceDirectIO: true}},
		{raw: "hard,soft,bg,fg,sharecache,suid,proto=TCP", want: MountOptions{Soft: true, Proto: "tcp"}},
		{raw: "defaults", want: MountOptions{}},
		{raw: "", want: MountOptions{}},
	}
	for _, tt := range tests {
		got, err := ParseMountOptions(tt.raw)
		if err != nil {
			t.Fatalf("%q: %v", tt.raw, err)
		}
		tt.want.Raw = tt.raw
		got.opts = nil
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tt.raw, *got, tt.want)
		}
		if got.AttrCacheOff() != tt.off {
			t.Errorf("%q: AttrCacheOff = %v, want %v", tt.raw, got.AttrCacheOff(), tt.off)
		}
	}
	for _, bad := range []string{"rsize=32k", "timeo=-1", "actimeo=x", "wsize="} {
		if _, err := ParseMountOptions(bad); err == nil || !strings.Contains(err.Error(), strings.SplitN(bad, "=", 2)[0]) {
			t.Errorf("%q: err = %v, want one naming the option", bad, err)
		}
	}
}

func TestMountOptionsGetAndText(t *testing.T) {
	o, _ := ParseMountOptions("rw,actimeo=0,acregmin=0,intr,nointr")
	if v, ok := o.Get("actimeo"); !ok || v != "0" {
		t.Errorf("Get(actimeo) = %q, %v", v, ok)
	}
	if !o.Has("intr") || o.Intr != "nointr" {
		t.Errorf("Has(intr) = %v, Intr = %q", o.Has("intr"), o.Intr)
	}
	if got := o.AttrCacheText(); got != "actimeo=0,acregmin=0" {
		t.Errorf("AttrCacheText = %q", got)
	}
	o, _ = ParseMountOptions("rw,hard")
	if got := o.AttrCacheText(); !strings.Contains(got, "defaults") {
		t.Errorf("AttrCacheText = %q", got)
	}
}

func TestParseFstab(t *testing.T) {
	in := `# comment
  # indented comment

/dev/mapper/ol-root /  xfs defaults 0 0
nas01:/vol/oradata   /u02/my\040data   nfs  rw,bg,hard,rsize=65536,wsize=65536,tcp,vers=3,actimeo=0  0 0
nas02:/vol/x /x nfs4
tmpfs /tmp tmpfs rw,size=512m
`
	es, err := parseFstab(strings.NewReader(in), "/etc/fstab")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 {
		t.Fatalf("got %d entries, want 4", len(es))
	}
	e := es[1]
	if e.MountPoint != "/u02/my data" || e.Device != "nas01:/vol/oradata" || e.Line != 5 || e.Opts == nil {
		t.Fatalf("entry = %+v", e)
	}
	if e.Opts.File != "/etc/fstab" || e.Opts.Line != 5 || e.Opts.RsizeBytes != 65536 || !e.Opts.AttrCacheOff() {
		t.Errorf("opts = %+v", e.Opts)
	}
	if es[2].Opts == nil || es[2].Opts.Raw != "defaults" {
		t.Errorf("entry without options = %+v", es[2])
	}
	if es[0].Opts != nil || es[3].Opts != nil {
		t.Errorf("non-NFS entries got options parsed")
	}

	for _, tt := range []struct{ in, want string }{
		{"# x\nnas:/a\n", "line 2: want 4 to 6 fields"},
		{"\n\nnas:/a /a nfs rsize=big 0 0\n", "line 3: option rsize"},
		{"a b c d e f g\n", "line 1:"},
	} {
		_, err := parseFstab(strings.NewReader(tt.in), "/etc/fstab")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:     "/a b",
		`/a\011b`:     "/a\tb",
		`/a\134b`:     `/a\b`,
		`/a\04`:       `/a\04`,
		`/a\`:         `/a\`,
		`/a\999`:      `/a\999`,
		`\040\040`:    "  ",
		`/plain/path`: "/plain/path",
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseVfstab(t *testing.T) {
	in := `#device		device		mount		FS	fsck	mount	mount
#to mount	to fsck		point		type	pass	at boot	options
fd	-	/dev/fd	fd	-	no	-
nas01:/vol/oradata	-	/u02/oradata	nfs	-	yes	rw,bg,hard,nointr,noac,forcedirectio,vers=3
nas01:/vol/x	-	/x	nfs	-	yes	-
nas01:/vol/y	-	/y	nfs	-	no	rw,hard
`
	es, err := parseVfstab(strings.NewReader(in), "/etc/vfstab")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 || es[1].Opts == nil || !es[1].Opts.NoAC || !es[1].Opts.ForceDirectIO || es[1].Line != 4 || es[1].Opts.NoAuto {
		t.Fatalf("entries = %+v", es)
	}
	if es[2].Opts == nil || es[2].Opts.Raw != "" {
		t.Errorf("- options = %+v", es[2].Opts)
	}
	if !es[3].Opts.NoAuto {
		t.Errorf("mount at boot no: NoAuto not set")
	}
	if _, err := parseVfstab(strings.NewReader("fd - /dev/fd fd - no\n"), "/etc/vfstab"); err == nil || !strings.Contains(err.Error(), "line 1: want 7 fields") {
		t.Errorf("err = %v", err)
	}
}

func TestParseMnttab(t *testing.T) {
	in := "rpool/ROOT/s11\t/\tzfs\tdev=4850002\t1712131200\n" +
		"nas01:/vol/oradata\t/u02/ora data\tnfs\trw,hard,noac,forcedirectio,vers=3,dev=9040002\t1712131230\n" +
		"nas02:/vol/hp /hp nfs rw,hard,noac 0 0 1712131230 0\n"
	es, err := parseMnttab(strings.NewReader(in), "/etc/mnttab")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[1].MountPoint != "/u02/ora data" || !es[1].Opts.ForceDirectIO || es[2].MountPoint != "/hp" || !es[2].Opts.NoAC {
		t.Fatalf("entries = %+v", es)
	}
	if _, err := parseMnttab(strings.NewReader("x\t/y\n"), "/etc/mnttab"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v", err)
	}
}

func TestParseAIXFilesystems(t *testing.T) {
	in := `* AIX /etc/filesystems
default:
	vol		= OS
	mount		= false

/:
	dev		= /dev/hd4
	vfs		= jfs2
	log		= /dev/hd8
	mount		= automatic

/u02/oradata:
	dev		= "/vol/oradata"
	vfs		= nfs
	nodename	= nas01
	mount		= true
	options		= rw,bg,hard,nointr,rsize=65536,wsize=65536,timeo=600,proto=tcp,vers=3,noac
	account		= false
`
	es, err := parseAIXFilesystems(strings.NewReader(in), "/etc/filesystems")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 {
		t.Fatalf("got %d entries, want 2: %+v", len(es), es)
	}
	e := es[1]
	if e.Device != "nas01:/vol/oradata" || e.MountPoint != "/u02/oradata" || e.Opts == nil || !e.Opts.NoAC || e.Opts.Line != 17 || e.Opts.NoAuto {
		t.Errorf("entry = %+v opts %+v", e, e.Opts)
	}
	// The Linux file of the same name lists file-system types.
	es, err = parseAIXFilesystems(strings.NewReader("ext4\next3\nnodev proc\n*\n"), "/etc/filesystems")
	if err != nil || es != nil {
		t.Errorf("linux filesystems: %v, %v", es, err)
	}
	for _, tt := range []struct{ in, want string }{
		{"/a:\n\tdev = x\nbogus line here\n", "line 3: want a stanza header"},
		{"/a:\n\tdev x\n", "line 2: want \"attribute = value\""},
		{"/a:\n\tvfs = nfs\n\toptions = rsize=x\n", "line 3: option rsize"},
	} {
		_, err := parseAIXFilesystems(strings.NewReader(tt.in), "/etc/filesystems")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestParseMountstats(t *testing.T) {
	f, err := os.Open("../../testdata/nodes/ol7-everything-wrong/proc/self/mountstats")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := ParseMountstats(f, MountstatsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 8 {
		t.Fatalf("got %d NFS mounts, want 8", len(st))
	}
	data := st["/u02/oradata"]
	if data == nil || data.Transport == nil || data.Transport.Proto != "udp" || data.Age != 604810*time.Second || data.StatVersion != "1.1" {
		t.Fatalf("/u02/oradata = %+v", data)
	}
	var read *OpStats
	for i := range data.Ops {
		if data.Ops[i].Op == "READ" {
			read = &data.Ops[i]
		}
	}
	if read == nil || read.Retransmissions() == 0 || read.RTT == 0 || read.Execute < read.RTT {
		t.Errorf("READ = %+v", read)
	}
	if st["/mnt/stage area"] == nil {
		t.Errorf("escaped mount point not unescaped: %v", keys(st))
	}
	tcp := st["/u03/redo"].Transport
	if tcp.Proto != "tcp" || tcp.Sends == 0 || tcp.Connects != 1 || tcp.MaxSlots != 65 {
		t.Errorf("tcp transport = %+v", tcp)
	}

	for _, tt := range []struct{ in, want string }{
		{"device nas:/a mounted on /a\n", "line 1: want \"device DEV mounted on DIR with fstype TYPE\""},
		{"device nas:/a mounted on /a with fstype nfs statvers=1.1\n\tage:\tx\n", "line 2: age: field 1 \"x\" is not a number"},
		{"device nas:/a mounted on /a with fstype nfs statvers=1.1\n\tbytes:\t1 2 3\n", "line 2: bytes: want at least 8 numbers"},
		{"device nas:/a mounted on /a with fstype nfs statvers=1.1\n\tper-op statistics\n\t        READ: 1 2 3\n", "line 3: operation READ: want at least 8"},
		{"device nas:/a mounted on /a with fstype nfs statvers=1.1\n\txprt:\ttcp 1 x\n", "line 2: xprt:"},
		{"garbage\n", "line 1: want a \"device\" line"},
	} {
		_, err := ParseMountstats(strings.NewReader(tt.in), MountstatsFile)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.in, err, tt.want)
		}
	}
	// Statistics lines of file systems we do not judge are skipped.
	st, err = ParseMountstats(strings.NewReader("device /dev/sda1 mounted on / with fstype ext4\n\tsomething: 1\n"), MountstatsFile)
	if err != nil || len(st) != 0 {
		t.Errorf("non-NFS: %v %v", st, err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func gatherTree(t *testing.T, files map[string]string) (*Inventory, *Source) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "<dir>" {
			if err := os.Mkdir(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Gather(context.Background(), src, Options{})
	if err != nil && !errors.Is(err, ErrNothingRead) { // a tree of one unreadable table
		t.Fatal(err)
	}
	return inv, src
}

func mountsSection(t *testing.T, inv *Inventory) Section {
	t.Helper()
	for _, s := range inv.Sections {
		if s.Name == "mounts" {
			return s
		}
	}
	t.Fatalf("no mounts section in %+v", inv.Sections)
	return Section{}
}

func TestGatherNFSSections(t *testing.T) {
	fstab := "nas:/vol/a /a nfs rw,hard,actimeo=0 0 0\n"
	tests := []struct {
		name   string
		files  map[string]string
		status string
		detail string
		mounts int
	}{
		{"nothing", map[string]string{"etc/hostname": "x\n"}, "absent", "no running mount table", 0},
		{"fstab only", map[string]string{"etc/fstab": fstab}, "partial", "judged the static tables only", 1},
		{"fstab unreadable", map[string]string{"etc/fstab": "<dir>", "etc/vfstab": "nas:/vol/b - /b nfs - yes hard\n"}, "partial", "/etc/fstab: a directory, not a regular file", 1},
		{"all unreadable", map[string]string{"etc/fstab": "<dir>"}, "unreadable", "/etc/fstab: a directory, not a regular file", 0},
		{"bad fstab line", map[string]string{"etc/fstab": "# x\nnas:/a /a nfs rsize=no 0 0\n", "etc/mnttab": "nas:/vol/a\t/a\tnfs\thard\t1\n"}, "partial", "/etc/fstab: line 2: option rsize", 1},
		{"solaris", map[string]string{"etc/vfstab": "nas:/vol/a - /a nfs - yes rw,hard,noac\n", "etc/mnttab": "nas:/vol/a\t/a\tnfs\trw,hard,noac,dev=1\t1\n"}, "ok", "/etc/mnttab: 1 NFS of 1 entries", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, _ := gatherTree(t, tt.files)
			s := mountsSection(t, inv)
			if s.Status != tt.status || !strings.Contains(s.Detail, tt.detail) {
				t.Errorf("section = %+v, want %s containing %q", s, tt.status, tt.detail)
			}
			if len(inv.Mounts) != tt.mounts {
				t.Errorf("got %d mounts, want %d", len(inv.Mounts), tt.mounts)
			}
			if strings.Contains(s.Detail, os.TempDir()) {
				t.Errorf("detail leaks the machine path: %q", s.Detail)
			}
		})
	}
}

func TestGatherNFSFixture(t *testing.T) {
	src, err := OpenDir("../../testdata/nodes/ol8-rac-bond-jumbo")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Gather(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := mountsSection(t, inv); s.Status != "ok" {
		t.Errorf("section = %+v", s)
	}
	var points []string
	for _, m := range inv.Mounts {
		points = append(points, m.MountPoint)
		if !m.Mounted || m.Runtime == nil || m.Static == nil || m.Stats == nil {
			t.Errorf("%s: mounted %v runtime %v static %v stats %v", m.MountPoint, m.Mounted, m.Runtime != nil, m.Static != nil, m.Stats != nil)
			continue
		}
		if m.Runtime.File != MountinfoFile || m.Static.File != FstabFile || m.RuntimeTable != MountinfoFile {
			t.Errorf("%s: files %s %s", m.MountPoint, m.Runtime.File, m.Static.File)
		}
	}
	want := []string{"/backup", "/u01/app/oracle", "/u02/oradata", "/u03/redo", "/u04/crs"}
	if !reflect.DeepEqual(points, want) {
		t.Fatalf("mount points = %v, want %v", points, want)
	}
	data := inv.Mounts[2]
	if data.Server != "nas01" || data.Export != "/vol/oradata" || data.FSType != "nfs" || !data.Runtime.AttrCacheOff() || data.Runtime.Vers != "3" {
		t.Errorf("/u02/oradata = %+v runtime %+v", data, data.Runtime)
	}
	crs := inv.Mounts[4]
	if !crs.Runtime.NoAC || !crs.Runtime.Sync {
		t.Errorf("crs runtime = %+v", crs.Runtime)
	}
	if b := inv.Mounts[0]; b.FSType != "nfs4" || b.Runtime.Vers != "4.1" || b.Static.FSType != "nfs" {
		t.Errorf("backup = %+v", b)
	}
	// --collect writes exactly what was read: the NFS tables are among it.
	files := strings.Join(src.Files(), " ")
	for _, f := range []string{MountinfoFile, MountstatsFile, FstabFile} {
		if !strings.Contains(files, f) {
			t.Errorf("Source.Files() = %s, missing %s", files, f)
		}
	}
}

func TestSplitDevice(t *testing.T) {
	for in, want := range map[string][2]string{
		"nas01:/vol/a":       {"nas01", "/vol/a"},
		"[fd00::1]:/vol/a":   {"fd00::1", "/vol/a"},
		"10.0.0.1:/":         {"10.0.0.1", "/"},
		"/dev/sda1":          {"", "/dev/sda1"},
		"nas01:/vol/a:weird": {"nas01", "/vol/a:weird"},
	} {
		s, e := splitDevice(in)
		if s != want[0] || e != want[1] {
			t.Errorf("splitDevice(%q) = %q, %q", in, s, e)
		}
	}
	a := Mount{Server: "NAS01", Export: "/vol/a/"}
	b := Mount{Server: "nas01", Export: "/vol/a"}
	if a.ExportKey() != b.ExportKey() {
		t.Errorf("export keys differ: %q %q", a.ExportKey(), b.ExportKey())
	}
}

func FuzzParseMountOptions(f *testing.F) {
	for _, s := range []string{"rw,bg,hard,nointr,rsize=32768,wsize=32768,tcp,actimeo=0,vers=3,timeo=600", "vers=4,minorversion=1", "noac,acregmin=0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseMountOptions(s)
		if err != nil {
			return
		}
		o.AttrCacheOff()
		o.AttrCacheText()
		if o.Raw != s {
			t.Fatalf("raw = %q, want %q", o.Raw, s)
		}
	})
}

// fuzzTable checks a table parser never panics and every NFS entry it
// returns has options that know their file and line.
func fuzzTable(f *testing.F, file string, parse tableParser, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := parse(strings.NewReader(s), file)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error does not name the line: %v", err)
			}
			return
		}
		for _, e := range es {
			if isNFS(e.FSType) && (e.Opts == nil || e.Opts.File != file || e.Opts.Line < 1) {
				t.Fatalf("NFS entry without located options: %+v", e)
			}
		}
	})
}

func FuzzParseFstab(f *testing.F) {
	fuzzTable(f, FstabFile, parseFstab, "nas:/a /u\\040x nfs rw,hard,actimeo=0 0 0\n# c\n", "a b\n")
}

func FuzzParseVfstab(f *testing.F) {
	fuzzTable(f, VfstabFile, parseVfstab, "nas:/a - /a nfs - yes rw,noac,forcedirectio\n", "fd - /dev/fd fd - no -\n")
}

func FuzzParseMnttab(f *testing.F) {
	fuzzTable(f, MnttabFile, parseMnttab, "nas:/a\t/a b\tnfs\trw,noac,dev=1\t17\n", "x y nfs hard 0 0 1\n")
}

func FuzzParseAIXFilesystems(f *testing.F) {
	fuzzTable(f, AIXFilesystems, parseAIXFilesystems, "/a:\n\tdev = \"/vol/a\"\n\tvfs = nfs\n\tnodename = nas\n\toptions = rw,noac\n", "ext4\n*\n")
}

func FuzzParseMountstats(f *testing.F) {
	b, err := os.ReadFile("../../testdata/nodes/ol8-rac-bond-jumbo/proc/self/mountstats")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("device nas:/a mounted on /a with fstype nfs statvers=1.1\n\txprt:\tudp 1 2 3\n\tper-op statistics\n\t READ: 1 2 3 4 5 6 7 8 9\n")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseMountstats(strings.NewReader(s), MountstatsFile)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error does not name the line: %v", err)
			}
			return
		}
		for mp, m := range st {
			if m.File != MountstatsFile || mp == "" && m.mountPoint != "" {
				t.Fatalf("stats %q = %+v", mp, m)
			}
		}
	})
}

func BenchmarkGatherNFS(b *testing.B) {
	src, err := OpenDir("../../testdata/nodes/ol7-everything-wrong")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		inv := &Inventory{}
		gatherNFS(src, inv)
		if len(inv.Mounts) == 0 {
			b.Fatal("no mounts")
		}
	}
}
