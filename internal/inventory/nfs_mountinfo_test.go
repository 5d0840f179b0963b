package inventory

import (
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	in := `96 1 252:0 / / rw,relatime shared:1 - xfs /dev/mapper/ol-root rw,attr2,inode64,noquota

240 96 0:52 / /u02/my\040oradata rw,nosuid,relatime shared:126 - nfs nas01:/vol/oradata rw,vers=3,rsize=65536,wsize=65536,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,hard,proto=tcp,timeo=600,retrans=2,sec=sys,addr=192.168.10.21
255 96 0:55 / /backup rw,relatime - nfs4 nas02:/vol/backup rw,vers=4.1,rsize=1048576,wsize=1048576,hard,proto=tcp,timeo=600
211 96 0:47 / /proc/fs/nfsd rw,relatime shared:113 - nfsd nfsd rw
`
	es, err := parseMountinfo(strings.NewReader(in), MountinfoFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 {
		t.Fatalf("got %d entries, want 4", len(es))
	}
	e := es[1]
	if e.MountPoint != "/u02/my oradata" || e.Device != "nas01:/vol/oradata" || e.FSType != "nfs" || e.Line != 3 {
		t.Fatalf("entry = %+v", e)
	}
	o := e.Opts
	if o == nil || !o.AttrCacheOff() || !o.NoSuid || o.MountFlags != "rw,nosuid,relatime" || o.Vers != "3" || o.Line != 3 || o.File != MountinfoFile {
		t.Errorf("opts = %+v", o)
	}
	if es[2].Opts == nil || es[2].Opts.NoSuid || es[2].Opts.Vers != "4.1" {
		t.Errorf("nfs4 opts = %+v", es[2].Opts)
	}
	if es[3].Opts != nil {
		t.Errorf("nfsd got NFS options")
	}

	for _, tt := range []struct{ in, want string }{
		{"96 1 252:0 / / rw,relatime shared:1 - xfs /dev/root rw\ngarbage line\n", "line 2:"},
		{"1 2 3 4 5 6 7 8 9 10 11\n", "line 1:"},
		{"# not a mountinfo\n240 96 0:52 / /a rw - nfs nas:/a rw,rsize=x\n", "line 1:"},
		{"240 96 0:52 / /a rw - nfs nas:/a rw,rsize=x\n", "line 1: option rsize"},
	} {
		_, err := parseMountinfo(strings.NewReader(tt.in), MountinfoFile)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add("240 96 0:52 / /u02/my\\040oradata rw,nosuid,relatime shared:126 - nfs nas01:/vol/oradata rw,vers=3,hard,proto=tcp\n")
	f.Add("96 1 252:0 / / rw,relatime shared:1 - xfs /dev/root rw\n")
	fuzzTable(f, MountinfoFile, parseMountinfo)
}
