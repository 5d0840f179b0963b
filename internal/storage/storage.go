// Package storage measures a filesystem path with database-shaped I/O:
// redo (sequential synchronous writes at queue depth 1), datafile (8 KiB
// random reads and writes at rising outstanding I/O), backup (1 MiB
// sequential), install (an unzip-like tree of many files) and mkfile (one
// large file). Every profile works in a private directory it creates under
// the path, is bounded in size and time, and removes what it wrote; it never
// touches a file it did not create.
package storage

import (
	"errors"
	"fmt"
	"time"
)

// ErrSpec marks an invalid request (profile, size, time, path).
var ErrSpec = errors.New("storage: invalid request")

// Profile names an I/O pattern.
type Profile string

// Profiles.
const (
	Redo     Profile = "redo"
	Datafile Profile = "datafile"
	Backup   Profile = "backup"
	Install  Profile = "install"
	Mkfile   Profile = "mkfile"
)

// Profiles lists every profile with what it does, for help text.
var Profiles = []struct {
	Name Profile
	Help string
}{
	{Redo, "sequential synchronous writes (O_DSYNC) at queue depth 1, 512 B to 1 MiB, like LGWR"},
	{Datafile, "8 KiB random reads and writes (70/30) at 1, 2, 4, 8 and 16 outstanding I/Os, like DBWR and sessions"},
	{Backup, "1 MiB sequential writes, then reads of the same file, like RMAN"},
	{Install, "an unzip-like tree: files of mixed sizes created, written, closed and stat'ed"},
	{Mkfile, "one large file written in 8 KiB writes and flushed, like mkfile or a datafile resize"},
}

// Spec is one storage benchmark.
type Spec struct {
	Profile Profile `json:"profile"`
	Path    string  `json:"path"`
	// SizeBytes bounds the data a profile writes (the working file, or the
	// whole tree for install); 0 takes the profile's default.
	SizeBytes int64 `json:"size_bytes"`
	// Time bounds the run; each step of a stepped profile (redo sizes,
	// datafile depths) gets an equal share. 0 takes 10 s.
	Time time.Duration `json:"time_ns"`
	// Direct opens data files with O_DIRECT (no page cache), as a database
	// does on a filesystem that supports it.
	Direct bool `json:"direct"`
	// Emulate is, for an nfs:// Path, the mount options whose RPC pattern
	// the userspace client emulates ("defaults" when empty).
	Emulate string `json:"emulate,omitempty"`
}

// Bounds of a request.
const (
	MinSize = 1 << 20  // 1 MiB
	MaxSize = 64 << 30 // 64 GiB
	MaxTime = 24 * time.Hour
)

// DefaultSize is what each profile writes when no size is given: enough to
// leave the drive's cache for datafile, small enough for a quick run.
var DefaultSize = map[Profile]int64{
	Redo: 64 << 20, Datafile: 256 << 20, Backup: 512 << 20, Install: 128 << 20, Mkfile: 1 << 30,
}

// Validate checks s and fills the defaults.
func (s *Spec) Validate() error {
	if _, ok := DefaultSize[s.Profile]; !ok {
		return fmt.Errorf("%w: unknown profile %q: want redo, datafile, backup, install or mkfile", ErrSpec, s.Profile)
	}
	if s.SizeBytes == 0 {
		s.SizeBytes = DefaultSize[s.Profile]
	}
	if s.SizeBytes < MinSize || s.SizeBytes > MaxSize {
		return fmt.Errorf("%w: --size %d: want 1M to 64G", ErrSpec, s.SizeBytes)
	}
	if s.Time == 0 {
		s.Time = 10 * time.Second
	}
	if s.Time < 100*time.Millisecond || s.Time > MaxTime {
		return fmt.Errorf("%w: --time %s: want 100ms to 24h", ErrSpec, s.Time)
	}
	if s.Path == "" {
		return fmt.Errorf("%w: no path", ErrSpec)
	}
	if IsNFSURL(s.Path) {
		if s.Emulate == "" {
			s.Emulate = "defaults"
		}
		if s.Direct {
			return fmt.Errorf("%w: --direct is for a mounted path; over nfs:// use --emulate forcedirectio", ErrSpec)
		}
	} else if s.Emulate != "" {
		return fmt.Errorf("%w: --emulate needs an nfs://SERVER/EXPORT target, not a path", ErrSpec)
	}
	return nil
}
