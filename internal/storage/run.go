package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/interlink/interlink/internal/inventory"
)

// Run runs spec's profile in a private directory under spec.Path and
// removes it afterwards. A cancelled ctx ends the run early; the result
// keeps what was measured and says so.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if IsNFSURL(spec.Path) {
		return runEmulated(ctx, spec)
	}
	st, err := os.Stat(spec.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrSpec, spec.Path)
	}
	dir, err := os.MkdirTemp(spec.Path, ".interlink-storage-*")
	if err != nil {
		return nil, fmt.Errorf("%w: cannot create a working directory in %s: %v", ErrSpec, spec.Path, errors.Unwrap(err))
	}
	defer os.RemoveAll(dir)
	if spec.Direct {
		if err := probeDirect(dir); err != nil {
			return nil, fmt.Errorf("%w: --direct: %s does not support O_DIRECT: %v", ErrSpec, spec.Path, err)
		}
	}
	res := &Result{Schema: Schema, Spec: spec, Start: time.Now()}
	res.Filesystem, _ = filesystemOf(spec.Path)
	var nfsBefore *inventory.Mount
	if IsNFS(res.Filesystem.Type) {
		nfsBefore = nfsMount("/", res.Filesystem.MountPoint)
	}
	u0, s0 := cpuTimes()
	var run func(context.Context, *Result, string) error
	switch spec.Profile {
	case Redo:
		run = runRedo
	case Datafile:
		run = runDatafile
	case Backup:
		run = runBackup
	case Install:
		run = runInstall
	case Mkfile:
		run = runMkfile
	}
	err = run(ctx, res, dir)
	res.finish(ctx, u0, s0)
	if IsNFS(res.Filesystem.Type) {
		res.NFS = NFSReport(nfsBefore, nfsMount("/", res.Filesystem.MountPoint), ProfileRole[spec.Profile])
	}
	if err != nil && !res.Interrupted {
		err = fmt.Errorf("storage %s on %s: %w", spec.Profile, spec.Path, err)
		if len(res.Steps) == 0 {
			// Nothing measured (a full disk before the first step
			// ended): a result would only show the size asked for
			// "in 0.00 s".
			return nil, err
		}
		res.Error = err.Error()
		return res, err
	}
	return res, nil
}

// runEmulated runs spec against an nfs:// export with the userspace
// client.
func runEmulated(ctx context.Context, spec Spec) (*Result, error) {
	res := &Result{Schema: Schema, Spec: spec, Start: time.Now()}
	u0, s0 := cpuTimes()
	err := runNFS(ctx, res)
	res.finish(ctx, u0, s0)
	if errors.Is(err, ErrSpec) {
		return nil, err
	}
	if err != nil && !res.Interrupted {
		if res.Emulation == nil {
			return nil, fmt.Errorf("storage %s on %s: %w", spec.Profile, spec.Path, err)
		}
		err = fmt.Errorf("storage %s on %s: %w", spec.Profile, spec.Path, err)
		res.Error = err.Error()
		return res, err
	}
	return res, nil
}

// preallocate writes size bytes of non-zero data into a new file and
// flushes it, as a database formats a datafile: later writes overwrite
// allocated blocks instead of growing the file.
func preallocate(ctx context.Context, path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := fill(make([]byte, 1<<20))
	for off := int64(0); off < size; off += int64(len(buf)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), size-off)
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
	}
	return f.Sync()
}

// fill puts a non-repeating byte pattern into b, so no layer compresses or
// deduplicates it away.
func fill(b []byte) []byte {
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// aligned returns a buffer of n bytes aligned to 4 KiB, as O_DIRECT needs.
func aligned(n int) []byte {
	const align = 4096
	b := make([]byte, n+align)
	off := 0
	if r := int(uintptrOf(b) % align); r != 0 {
		off = align - r
	}
	return fill(b[off : off+n : off+n])
}

func tempName(dir, name string) string { return filepath.Join(dir, name) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// finish records the run's duration, its CPU time since cpuTimes gave u0
// and s0 (per I/O when there were any) and whether Ctrl-C ended it.
func (res *Result) finish(ctx context.Context, u0, s0 time.Duration) {
	u1, s1 := cpuTimes()
	res.Duration = time.Since(res.Start).Nanoseconds()
	res.CPUUserNs, res.CPUSysNs = (u1 - u0).Nanoseconds(), (s1 - s0).Nanoseconds()
	if n := res.IOs(); n > 0 {
		res.CPUNsPerIO = float64(res.CPUUserNs+res.CPUSysNs) / float64(n)
	}
	res.Interrupted = ctx.Err() != nil
}
