package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxOps bounds the operations of one step whatever the device's speed.
const maxOps = 10_000_000

// redoSizes are the write sizes of the redo profile: LGWR writes from one
// 512 B redo block to 1 MiB under load.
var redoSizes = []int{512, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

func runRedo(ctx context.Context, res *Result, dir string) error {
	path := tempName(dir, "redo01.log")
	if err := preallocate(ctx, path, res.Spec.SizeBytes); err != nil {
		return fmt.Errorf("preallocate: %w", err)
	}
	f, err := openData(path, os.O_WRONLY|syncFlag, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	share := res.Spec.Time / time.Duration(len(redoSizes))
	var off int64
	for _, size := range redoSizes {
		buf := aligned(size)
		r := newRec("write")
		start := time.Now()
		for i := 0; i < maxOps && time.Since(start) < share && ctx.Err() == nil; i++ {
			if off+int64(size) > res.Spec.SizeBytes {
				off = 0 // a redo log is written round and round
			}
			t := time.Now()
			n, err := f.WriteAt(buf, off)
			if err != nil {
				return fmt.Errorf("%s write at %d: %w", fmtSize(size), off, err)
			}
			r.add(time.Since(t), n)
			off += int64(n)
		}
		d := time.Since(start)
		res.Steps = append(res.Steps, Step{Name: fmtSize(size) + " sync writes", Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{r.op(d)}})
	}
	return nil
}

// datafileDepths are the outstanding I/O levels of the datafile profile,
// as ORION steps its small-I/O load.
var datafileDepths = []int{1, 2, 4, 8, 16}

const blockSize = 8 << 10

func runDatafile(ctx context.Context, res *Result, dir string) error {
	path := tempName(dir, "users01.dbf")
	if err := preallocate(ctx, path, res.Spec.SizeBytes); err != nil {
		return fmt.Errorf("preallocate: %w", err)
	}
	f, err := openData(path, os.O_RDWR|syncFlag, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	dropCache(f) // reads start from the storage, not from the preallocation's pages
	blocks := res.Spec.SizeBytes / blockSize
	share := res.Spec.Time / time.Duration(len(datafileDepths))
	for _, depth := range datafileDepths {
		reads, writes := newRec("read"), newRec("write")
		var mu sync.Mutex
		var wg sync.WaitGroup
		var firstErr error
		start := time.Now()
		for w := 0; w < depth; w++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15))
				rr, wr := newRec("read"), newRec("write")
				buf := aligned(blockSize)
				for i := 0; i < maxOps/depth && time.Since(start) < share && ctx.Err() == nil; i++ {
					off := rng.Int64N(blocks) * blockSize
					t := time.Now()
					var n int
					var err error
					if rng.IntN(10) < 7 {
						n, err = f.ReadAt(buf, off)
						rr.add(time.Since(t), n)
					} else {
						n, err = f.WriteAt(buf, off)
						wr.add(time.Since(t), n)
					}
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("8 KiB I/O at %d: %w", off, err)
						}
						mu.Unlock()
						return
					}
				}
				mu.Lock()
				reads.merge(rr)
				writes.merge(wr)
				mu.Unlock()
			}(uint64(depth*1000 + w + 1))
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		d := time.Since(start)
		res.Steps = append(res.Steps, Step{Name: fmt.Sprintf("8 KiB random 70/30, %d outstanding", depth), Depth: depth,
			Duration: d.Nanoseconds(), Ops: []Op{reads.op(d), writes.op(d)}})
	}
	return nil
}

func runBackup(ctx context.Context, res *Result, dir string) error {
	path := tempName(dir, "backup.bkp")
	f, err := openData(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := aligned(1 << 20)
	half := res.Spec.Time / 2
	written, step, err := writeThenSync(ctx, f, buf, res.Spec.SizeBytes, half)
	if err != nil {
		return err
	}
	step.Name = "1 MiB sequential writes"
	res.Steps = append(res.Steps, step)
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s before half the time ran out", fmtSize64(written), fmtSize64(res.Spec.SizeBytes)))
	}
	dropCache(f)
	r := newRec("read")
	start := time.Now()
	for off := int64(0); off < written && time.Since(start) < half && ctx.Err() == nil; {
		t := time.Now()
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			r.add(time.Since(t), n)
		}
		if err != nil {
			break
		}
		off += int64(n)
	}
	d := time.Since(start)
	res.Steps = append(res.Steps, Step{Name: "1 MiB sequential reads (cache dropped)", Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{r.op(d)}})
	return nil
}

func runMkfile(ctx context.Context, res *Result, dir string) error {
	f, err := openData(tempName(dir, "mkfile.dat"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	written, step, err := writeThenSync(ctx, f, aligned(blockSize), res.Spec.SizeBytes, res.Spec.Time)
	if err != nil {
		return err
	}
	step.Name = fmt.Sprintf("%s file in 8 KiB writes, then fsync", fmtSize64(written))
	res.Steps = append(res.Steps, step)
	if written < res.Spec.SizeBytes && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %s of %s in %s", fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

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

func runInstall(ctx context.Context, res *Result, dir string) error {
	rng := rand.New(rand.NewPCG(1, 2))
	mk, cr, wr, cl, ut, st := newRec("mkdir"), newRec("create"), newRec("write"), newRec("close"), newRec("utime"), newRec("stat")
	buf := fill(make([]byte, 64<<10))
	stamp := time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	var written int64
	var files int
	var sub string
	for files < installFiles && written < res.Spec.SizeBytes && time.Since(start) < res.Spec.Time && ctx.Err() == nil {
		if files%100 == 0 { // a new directory every 100 files, two levels deep
			sub = filepath.Join(dir, fmt.Sprintf("d%03d", files/10000), fmt.Sprintf("d%03d", files/100%100))
			t := time.Now()
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return fmt.Errorf("mkdir: %w", err)
			}
			mk.add(time.Since(t), 0)
		}
		name := filepath.Join(sub, fmt.Sprintf("f%05d", files))
		t := time.Now()
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		cr.add(time.Since(t), 0)
		for left := installSize(rng); left > 0; {
			n := min(left, len(buf))
			t = time.Now()
			m, err := f.Write(buf[:n])
			if err != nil {
				f.Close()
				return fmt.Errorf("write: %w", err)
			}
			wr.add(time.Since(t), m)
			written += int64(m)
			left -= m
		}
		t = time.Now()
		if err := f.Close(); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		cl.add(time.Since(t), 0)
		t = time.Now()
		if err := os.Chtimes(name, stamp, stamp); err != nil { // unzip restores each file's time
			return fmt.Errorf("utime: %w", err)
		}
		ut.add(time.Since(t), 0)
		t = time.Now()
		if _, err := os.Stat(name); err != nil {
			return fmt.Errorf("stat: %w", err)
		}
		st.add(time.Since(t), 0)
		files++
	}
	d := time.Since(start)
	res.Steps = append(res.Steps, Step{Name: fmt.Sprintf("%d files, %s, unzip-like", files, fmtSize64(written)), Depth: 1,
		Duration: d.Nanoseconds(), Ops: []Op{cr.op(d), wr.op(d), cl.op(d), ut.op(d), st.op(d), mk.op(d)}})
	if written < res.Spec.SizeBytes && files < installFiles && ctx.Err() == nil {
		res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("time: wrote %d files, %s of %s in %s", files, fmtSize64(written), fmtSize64(res.Spec.SizeBytes), res.Spec.Time))
	}
	return nil
}

func fmtSize(n int) string { return fmtSize64(int64(n)) }

func fmtSize64(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// writeThenSync writes buf sequentially until size bytes or bound, then
// fsyncs, timing each write and the fsync: one step, named by the caller.
func writeThenSync(ctx context.Context, f *os.File, buf []byte, size int64, bound time.Duration) (int64, Step, error) {
	w, fs := newRec("write"), newRec("fsync")
	start := time.Now()
	var written int64
	for written < size && time.Since(start) < bound && ctx.Err() == nil {
		t := time.Now()
		n, err := f.Write(buf)
		if err != nil {
			return written, Step{}, fmt.Errorf("%s write at %d: %w", fmtSize(len(buf)), written, err)
		}
		w.add(time.Since(t), n)
		written += int64(n)
	}
	t := time.Now()
	if err := f.Sync(); err != nil {
		return written, Step{}, fmt.Errorf("fsync: %w", err)
	}
	fs.add(time.Since(t), 0)
	d := time.Since(start)
	return written, Step{Depth: 1, Duration: d.Nanoseconds(), Ops: []Op{w.op(d), fs.op(d)}}, nil
}
