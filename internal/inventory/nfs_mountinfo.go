package inventory

import (
	"fmt"
	"io"
	"strings"
)

// mountinfoLine is one line of /proc/PID/mountinfo (proc(5)): the fields
// interlink uses.
type mountinfoLine struct {
	Mountpoint, Options, FSType, Source, VFSOptions string
}

// parseMountinfoLine parses one mountinfo line on any OS, so a Linux bundle
// is audited alike on macOS or Solaris:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//	(1)(2)(3)   (4)   (5)      (6)      (7)   (8)  (9)    (10)        (11)
//
// Optional fields (7) end at the "-" separator; paths are unescaped the way
// the kernel escapes them (\040 for a space, octal).
func parseMountinfoLine(line string) (mountinfoLine, error) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 10 || sep < 0 || len(f) < sep+3 {
		return mountinfoLine{}, fmt.Errorf("not a mountinfo line (want 10 or more fields with a '-' separator): '%s'", line)
	}
	for _, n := range f[:2] {
		// Only its form matters (the ids are never used): digits of any
		// length, as moby/sys/mountinfo accepts them.
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return mountinfoLine{}, fmt.Errorf("mount id %q is not a number: '%s'", n, line)
		}
	}
	m := mountinfoLine{Mountpoint: unescapeOctal(f[4]), Options: f[5], FSType: unescapeOctal(f[sep+1]), Source: unescapeOctal(f[sep+2])}
	if len(f) > sep+3 {
		m.VFSOptions = f[sep+3]
	}
	return m, nil
}

// parseMountinfo reads /proc/self/mountinfo one line at a time, so that an
// error can name the line. For NFS the per-superblock options (field 11)
// carry the NFS options; the per-mount flags (field 6: nosuid, noexec, ...)
// are parsed with them and kept in MountOptions.MountFlags.
func parseMountinfo(r io.Reader, file string) ([]tableEntry, error) {
	var out []tableEntry
	err := scanLines(r, "", func(n int, line string) error {
		in, err := parseMountinfoLine(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		e := tableEntry{Device: in.Source, MountPoint: in.Mountpoint, FSType: in.FSType, RawOptions: in.VFSOptions, Line: n}
		if err := e.withOptions(file); err != nil {
			return err
		}
		if e.Opts != nil {
			e.Opts.MountFlags = in.Options
			flags, err := ParseMountOptions(in.Options)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			e.Opts.NoSuid = flags.NoSuid
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
