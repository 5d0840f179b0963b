package storage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInstallTree holds the one install loop (local and NFS share it) on a
// real directory: 100 files per directory two levels deep, each file's
// time set to the stamp unzip restores, the bytes written on disk, and the
// size bound reached without a time limit to report.
func TestInstallTree(t *testing.T) {
	dir := t.TempDir()
	res := &Result{Spec: Spec{SizeBytes: 12 << 20, Time: time.Minute}}
	if err := install(context.Background(), res, &localTree{dir: dir}); err != nil {
		t.Fatal(err)
	}
	var files int
	var bytes int64
	stamp := time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := filepath.Join(dir, fmt.Sprintf("d%03d", files/10000), fmt.Sprintf("d%03d", files/100%100), fmt.Sprintf("f%05d", files))
		if p != want || !info.ModTime().Equal(stamp) {
			return fmt.Errorf("file %d: %s at %s, want %s at %s", files, p, info.ModTime(), want, stamp)
		}
		files++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || len(res.LimitedBy) != 0 {
		t.Fatalf("steps %+v, limited by %v", res.Steps, res.LimitedBy)
	}
	ops := map[string]Op{}
	for _, o := range res.Steps[0].Ops {
		ops[o.Name] = o
	}
	dirs := int64((files + 99) / 100)
	if bytes < res.Spec.SizeBytes || ops["write"].Bytes != bytes || ops["create"].Count != int64(files) ||
		ops["close"].Count != int64(files) || ops["utime"].Count != int64(files) || ops["stat"].Count != int64(files) || ops["mkdir"].Count != dirs {
		t.Errorf("%d files of %d bytes in %d directories; ops %+v", files, bytes, dirs, ops)
	}
}

// cutSeq is a local file written the way NFS files are: the last write
// cut to the size.
type cutSeq struct{ localSeq }

func (cutSeq) whole() bool { return false }

// TestSeqFileSize: mkfile over a file whose writes must be whole (a local
// one, aligned for O_DIRECT) ends on a whole buffer past an odd size;
// over one that cuts (NFS) it ends at the size exactly; backup reads back
// every byte it wrote.
func TestSeqFileSize(t *testing.T) {
	const size = 3*blockSize + 100
	for _, c := range []struct {
		name string
		seq  func(*os.File) seqFile
		want int64
	}{
		{"whole", func(f *os.File) seqFile { return localSeq{f} }, 4 * blockSize},
		{"cut", func(f *os.File) seqFile { return cutSeq{localSeq{f}} }, size},
	} {
		f, err := os.Create(filepath.Join(t.TempDir(), "mkfile.dat"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		res := &Result{Spec: Spec{SizeBytes: size, Time: time.Minute}}
		if err := mkfile(context.Background(), res, c.seq(f), fill(make([]byte, blockSize))); err != nil {
			t.Fatal(err)
		}
		info, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() != c.want || res.Steps[0].Ops[0].Bytes != c.want {
			t.Errorf("%s: file of %d bytes, %d written, want %d", c.name, info.Size(), res.Steps[0].Ops[0].Bytes, c.want)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "backup.bkp"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := &Result{Spec: Spec{SizeBytes: 3<<20 + 5, Time: time.Minute}}
	if err := backup(context.Background(), res, cutSeq{localSeq{f}}, fill(make([]byte, 1<<20)), "reads"); err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Steps[0].Ops[0].Bytes != res.Spec.SizeBytes || res.Steps[1].Name != "reads" || res.Steps[1].Ops[0].Bytes != res.Spec.SizeBytes {
		t.Errorf("backup steps %+v", res.Steps)
	}
}
