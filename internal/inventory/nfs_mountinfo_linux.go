package inventory

import (
	"bufio"
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
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	n := 0
	for s.Scan() {
		n++
		line := s.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		infos, err := mountinfo.GetMountsFromReader(strings.NewReader(line), nil)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		for _, in := range infos {
			e := tableEntry{Device: in.Source, MountPoint: in.Mountpoint, FSType: in.FSType, RawOptions: in.VFSOptions, Line: n}
			if err := e.withOptions(file); err != nil {
				return nil, err
			}
			if e.Opts != nil {
				e.Opts.MountFlags = in.Options
				flags, err := ParseMountOptions(in.Options)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
				e.Opts.NoSuid = flags.NoSuid
			}
			out = append(out, e)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}
