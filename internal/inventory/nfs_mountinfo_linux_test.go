package inventory

import (
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

// FuzzMountinfoAgainstMoby holds the portable parser to moby/sys/mountinfo
// (Linux-only): for any line shaped as the kernel writes them (fields
// separated by one space, numeric ids, one "-" separator), wherever moby
// parses it ours does too, with the same mount point, source, type and
// options. (Moby also takes garbage such as empty fields, which ours
// refuses.)
func FuzzMountinfoAgainstMoby(f *testing.F) {
	f.Add(`240 96 0:52 / /u02/my\040oradata rw,nosuid,relatime shared:126 - nfs nas01:/vol/oradata rw,vers=3,hard`)
	f.Add(`36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`)
	f.Add(`211 96 0:47 / /proc/fs/nfsd rw,relatime shared:113 - nfsd nfsd rw`)
	f.Fuzz(func(t *testing.T, line string) {
		// The kernel escapes only space, tab, newline and backslash;
		// other backslash sequences are not its output (and the two
		// parsers treat them differently).
		if strings.Contains(kernelEscapes.Replace(line), `\`) {
			return
		}
		f := strings.Fields(line)
		if strings.Join(f, " ") != line || len(f) < 10 || !numeric(f[0]) || !numeric(f[1]) || !strings.Contains(f[2], ":") {
			return
		}
		seps := 0
		for _, x := range f[6:] {
			if x == "-" {
				seps++
			}
		}
		if seps != 1 || f[5] == "-" {
			return
		}
		infos, err := mountinfo.GetMountsFromReader(strings.NewReader(line), nil)
		if err != nil || len(infos) != 1 {
			return
		}
		ours, err := parseMountinfoLine(line)
		if err != nil {
			t.Fatalf("moby parses %q, ours fails: %v", line, err)
		}
		m := infos[0]
		if ours.Mountpoint != m.Mountpoint || ours.Source != m.Source || ours.FSType != m.FSType || ours.Options != m.Options || ours.VFSOptions != m.VFSOptions {
			t.Fatalf("%q:\nours %+v\nmoby %+v", line, ours, m)
		}
	})
}

func numeric(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// kernelEscapes removes the escapes the kernel writes in mountinfo.
var kernelEscapes = strings.NewReplacer(`\040`, "", `\011`, "", `\012`, "", `\134`, "")
