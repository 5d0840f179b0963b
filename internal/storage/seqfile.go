package storage

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/interlink/interlink/internal/nfs"
)

// seqFile is a file the mkfile and backup profiles write front to back,
// sync and read back: a local file (O_DIRECT with --direct) or a file of
// an NFS export. The profiles are the same over both.
type seqFile interface {
	write(ctx context.Context, b []byte) (int, error)
	sync(ctx context.Context) error
	readAt(ctx context.Context, b []byte, off int64) (int, error)
	// dropCache makes the reads that follow go to the storage.
	dropCache()
	// whole says every write is the whole buffer, so the file may end past
	// the size: O_DIRECT takes only aligned lengths. Otherwise the last
	// write is cut to the size.
	whole() bool
}

// writeThenSync writes buf sequentially until size bytes or bound, then
// fsyncs, timing each write and the fsync: one step, named by the caller.
// On an error the step holds what was done before it (a full filesystem
// stops the writes, not the measurement of those made).
func writeThenSync(ctx context.Context, f seqFile, buf []byte, size int64, bound time.Duration) (int64, Step, error) {
	w, fs := newRec("write"), newRec("fsync")
	start := time.Now()
	var written int64
	step := func() Step {
		d := time.Since(start)
		return Step{Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{w.op(d), fs.op(d)}}
	}
	for written < size && time.Since(start) < bound && ctx.Err() == nil {
		b := buf
		if !f.whole() {
			b = buf[:min(int64(len(buf)), size-written)]
		}
		t := time.Now()
		n, err := f.write(ctx, b)
		if err != nil {
			return written, step(), fmt.Errorf("%s write at %d: %w", fmtSize(len(b)), written, err)
		}
		w.add(time.Since(t), n)
		written += int64(n)
	}
	t := time.Now()
	if err := f.sync(ctx); err != nil {
		return written, step(), fmt.Errorf("fsync: %w", err)
	}
	fs.add(time.Since(t), 0)
	return written, step(), nil
}

// mkfile writes the mkfile profile's file in 8 KiB writes (buf), then
// fsyncs it, in the run's time.
func mkfile(ctx context.Context, res *Result, f seqFile, buf []byte) error {
	written, step, err := writeThenSync(ctx, f, buf, res.Spec.SizeBytes, res.Spec.Time)
	step.Name = fmt.Sprintf("%s file in 8 KiB writes, then fsync", fmtSize64(written))
	res.addStep(step)
	if err != nil {
		return err
	}
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s in %s", fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

// backup writes a backup piece in 1 MiB writes (buf) for half the time,
// then reads back what it wrote for the other half; readName names the
// reading step (what stands between it and the storage's cache).
func backup(ctx context.Context, res *Result, f seqFile, buf []byte, readName string) error {
	half := res.Spec.Time / 2
	written, step, err := writeThenSync(ctx, f, buf, res.Spec.SizeBytes, half)
	step.Name = "1 MiB sequential writes"
	res.addStep(step)
	if err != nil {
		return err
	}
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s before half the time ran out", fmtSize64(written), fmtSize64(res.Spec.SizeBytes)))
	}
	f.dropCache()
	r := newRec("read")
	start := time.Now()
	for off := int64(0); off < written && time.Since(start) < half && ctx.Err() == nil; {
		t := time.Now()
		n, err := f.readAt(ctx, buf[:min(int64(len(buf)), written-off)], off)
		if n > 0 {
			r.add(time.Since(t), n)
		}
		if err != nil || n == 0 {
			break
		}
		off += int64(n)
	}
	d := time.Since(start)
	res.Steps = append(res.Steps, Step{Name: readName, Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{r.op(d)}})
	return nil
}

// localSeq is a seqFile on a local file, every write whole (the buffers
// are aligned for O_DIRECT).
type localSeq struct{ f *os.File }

func (l localSeq) write(_ context.Context, b []byte) (int, error) { return l.f.Write(b) }
func (l localSeq) sync(context.Context) error                     { return l.f.Sync() }
func (l localSeq) readAt(_ context.Context, b []byte, off int64) (int, error) {
	return l.f.ReadAt(b, off)
}
func (l localSeq) dropCache()  { dropCache(l.f) }
func (l localSeq) whole() bool { return true }

// nfsSeq is a seqFile on an NFS file: the userspace client keeps no cache
// to drop.
type nfsSeq struct{ f *nfs.File }

func (n nfsSeq) write(ctx context.Context, b []byte) (int, error) {
	if err := n.f.Write(ctx, b); err != nil {
		return 0, err
	}
	return len(b), nil
}
func (n nfsSeq) sync(ctx context.Context) error { return n.f.Sync(ctx) }
func (n nfsSeq) readAt(ctx context.Context, b []byte, off int64) (int, error) {
	return n.f.ReadAt(ctx, b, off)
}
func (n nfsSeq) dropCache()  {}
func (n nfsSeq) whole() bool { return false }
