package inventory

import (
	"fmt"
	"io"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// parseMountinfo reads /proc/self/mountinfo with moby/sys/mountinfo, which
// unescapes paths (\040 for a space) the way the kernel wrote them. It is
// fed one line at a time so that an error can name the line. For NFS the
// per-superblock options (field 11) carry the NFS options; the per-mount
// flags (field 6: nosuid, noexec, ...) are parsed with them and kept in
// MountOptions.MountFlags.
func parseMountinfo(r io.Reader, file string) ([]tableEntry, error) {
	var out []tableEntry
	err := scanLines(r, "", func(n int, line string) error {
		infos, err := mountinfo.GetMountsFromReader(strings.NewReader(line), nil)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		for _, in := range infos {
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
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
