package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// installFiles bounds the tree of the install profile.
const installFiles = 100_000

// installSize draws a file size the way a patch set or an Oracle home's
// files are spread: most are small, a few are large.
func installSize(rng *rand.Rand) int {
	switch p := rng.IntN(100); {
	case p < 60:
		return 1<<10 + rng.IntN(7<<10)
	case p < 90:
		return 8<<10 + rng.IntN(56<<10)
	case p < 99:
		return 64<<10 + rng.IntN(448<<10)
	default:
		return 512<<10 + rng.IntN(3584<<10)
	}
}

// tree is where the install profile unpacks: a local directory or a
// directory of an NFS export. The profile (the files, their sizes, the
// order of the operations, what is timed and when it stops) is the same
// over both; only the calls differ.
type tree interface {
	// mkdirs makes top/sub (top only the first time it is named) and
	// makes it the directory create creates in.
	mkdirs(ctx context.Context, top, sub string) error
	create(ctx context.Context, name string) (treeFile, error)
}

// treeFile is a file install writes, closes, then sets the time of and
// stats, as unzip does.
type treeFile interface {
	write(ctx context.Context, b []byte) (int, error)
	close(ctx context.Context) error
	setTimes(ctx context.Context, t time.Time) error
	stat(ctx context.Context) error
}

// install unpacks a tree of files like an unzip of an Oracle home or a
// patch set into t: a new directory every 100 files, two levels deep,
// each file written in 64 KiB writes, closed, its time set and stat'ed;
// every operation timed. It stops at the size, the time, installFiles
// files or Ctrl-C, and says so when the time stopped it.
func install(ctx context.Context, res *Result, t tree) error {
	rng := rand.New(rand.NewPCG(1, 2))
	mk, cr, wr, cl, ut, st := newRec("mkdir"), newRec("create"), newRec("write"), newRec("close"), newRec("utime"), newRec("stat")
	buf := fill(make([]byte, 64<<10))
	stamp := time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	var written int64
	var files int
	// An error ends the loop, not the result: the step keeps the files made.
	err := func() error {
		for files < installFiles && written < res.Spec.SizeBytes && time.Since(start) < res.Spec.Time && ctx.Err() == nil {
			if files%100 == 0 { // a new directory every 100 files, two levels deep
				t0 := time.Now()
				if err := t.mkdirs(ctx, fmt.Sprintf("d%03d", files/10000), fmt.Sprintf("d%03d", files/100%100)); err != nil {
					return fmt.Errorf("mkdir: %w", err)
				}
				mk.add(time.Since(t0), 0)
			}
			t0 := time.Now()
			f, err := t.create(ctx, fmt.Sprintf("f%05d", files))
			if err != nil {
				return fmt.Errorf("create: %w", err)
			}
			cr.add(time.Since(t0), 0)
			for left := installSize(rng); left > 0; {
				n := min(left, len(buf))
				t0 = time.Now()
				m, err := f.write(ctx, buf[:n])
				if err != nil {
					return fmt.Errorf("write: %w", err)
				}
				wr.add(time.Since(t0), m)
				written += int64(m)
				left -= m
			}
			for _, op := range []struct {
				rec  *rec
				name string
				do   func(context.Context) error
			}{
				{cl, "close", f.close},
				{ut, "utime", func(ctx context.Context) error { return f.setTimes(ctx, stamp) }}, // unzip restores each file's time
				{st, "stat", f.stat},
			} {
				t0 = time.Now()
				if err := op.do(ctx); err != nil {
					return fmt.Errorf("%s: %w", op.name, err)
				}
				op.rec.add(time.Since(t0), 0)
			}
			files++
		}
		return nil
	}()
	d := time.Since(start)
	res.addStep(Step{Name: fmt.Sprintf("%d files, %s, unzip-like", files, fmtSize64(written)), Depth: 1,
		Duration: d.Nanoseconds(), Ops: []Op{cr.op(d), wr.op(d), cl.op(d), ut.op(d), st.op(d), mk.op(d)}})
	if err != nil {
		return err
	}
	if written < res.Spec.SizeBytes && files < installFiles && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %d files, %s of %s in %s", files, fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

func runInstall(ctx context.Context, res *Result, dir string) error {
	return install(ctx, res, &localTree{dir: dir})
}

// localTree is install's tree in a local directory.
type localTree struct {
	dir, cur string
}

func (l *localTree) mkdirs(_ context.Context, top, sub string) error {
	l.cur = filepath.Join(l.dir, top, sub)
	return os.MkdirAll(l.cur, 0o755)
}

func (l *localTree) create(_ context.Context, name string) (treeFile, error) {
	p := filepath.Join(l.cur, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &localFile{f: f, path: p}, nil
}

type localFile struct {
	f    *os.File
	path string
}

// write closes the file when it fails: the profile stops there, and the
// descriptor must not outlive it.
func (l *localFile) write(_ context.Context, b []byte) (int, error) {
	n, err := l.f.Write(b)
	if err != nil {
		l.f.Close()
	}
	return n, err
}

func (l *localFile) close(context.Context) error { return l.f.Close() }

func (l *localFile) setTimes(_ context.Context, t time.Time) error {
	return os.Chtimes(l.path, t, t)
}

func (l *localFile) stat(context.Context) error {
	_, err := os.Stat(l.path)
	return err
}
