package storage

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// syncFlag makes each write durable before it returns, as LGWR and DBWR
// need (O_DSYNC: data and the metadata needed to read it back).
const syncFlag = unix.O_DSYNC

func openData(path string, flag int, direct bool) (*os.File, error) {
	if direct {
		flag |= unix.O_DIRECT
	}
	return os.OpenFile(path, flag, 0o600)
}

// probeDirect reports whether files in dir can be opened with O_DIRECT
// (tmpfs and some FUSE filesystems refuse it).
func probeDirect(dir string) error {
	p := filepath.Join(dir, "direct-probe")
	defer os.Remove(p)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|unix.O_DIRECT, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(aligned(4096))
	return err
}

// dropCache asks the kernel to forget f's cached pages, so reading it back
// reads the storage, not memory.
func dropCache(f *os.File) {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

func cpuTimes() (user, sys time.Duration) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// filesystemOf returns the mount that holds path: the longest mount point
// that is a parent of it.
func filesystemOf(path string) (Filesystem, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Filesystem{}, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	ms, err := mountinfo.GetMounts(mountinfo.ParentsFilter(abs))
	if err != nil || len(ms) == 0 {
		return Filesystem{}, err
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if len(m.Mountpoint) >= len(best.Mountpoint) {
			best = m
		}
	}
	// Per-mount options, then the superblock's that add to them.
	opts := best.Options
	seen := map[string]bool{}
	for _, o := range strings.Split(opts, ",") {
		seen[o] = true
	}
	for _, o := range strings.Split(best.VFSOptions, ",") {
		if o != "" && !seen[o] {
			opts += "," + o
			seen[o] = true
		}
	}
	return Filesystem{MountPoint: best.Mountpoint, Type: best.FSType, Source: best.Source, Options: opts}, nil
}
