package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
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
	f, err := openData(tempName(dir, "backup.bkp"), os.O_CREATE|os.O_EXCL|os.O_RDWR, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	return backup(ctx, res, localSeq{f}, aligned(1<<20), "1 MiB sequential reads (cache dropped)")
}

func runMkfile(ctx context.Context, res *Result, dir string) error {
	f, err := openData(tempName(dir, "mkfile.dat"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, res.Spec.Direct)
	if err != nil {
		return err
	}
	defer f.Close()
	return mkfile(ctx, res, localSeq{f}, aligned(blockSize))
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
