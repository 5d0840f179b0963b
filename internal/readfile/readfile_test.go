package readfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, c := range []struct{ path, kind string }{
		{dir, "a directory"},
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(c.path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.kind) {
				t.Errorf("Open(%s) = %v, want ErrNotRegular naming %q", c.path, err, c.kind)
			}
		case <-time.After(60 * time.Second): // only against a hang
			t.Fatalf("Open(%s) blocked", c.path)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

func TestReadAllBounds(t *testing.T) {
	name := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(name, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadAll(name, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadAll at the limit = %q, %v", b, err)
	}
	if _, err := ReadAll(name, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadAll over the limit = %v, want ErrTooLarge", err)
	}
	if _, err := ReadAll("/dev/zero", 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadAll(/dev/zero) = %v, want ErrNotRegular", err)
	}
}

// TestTooLargeUnread: a file already larger than the limit is refused
// before it is read, so refusing it costs no buffer of the limit's size
// (a 200 MB file against report's 64 MiB took 180 MB of memory).
func TestTooLargeUnread(t *testing.T) {
	name := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(name, 1<<30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	const limit = 64 << 20
	for what, read := range map[string]func() error{
		"ReadAll":        func() error { _, err := ReadAll(name, limit); return err },
		"ReadAllContext": func() error { _, err := ReadAllContext(context.Background(), name, limit); return err },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want ErrTooLarge naming the file", what, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s allocated %d bytes to refuse the file", what, n)
		}
	}
}

// endless is a reader that never ends, as /dev/zero would be.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// startedReader closes started at its first read.
type startedReader struct {
	io.Reader
	once    sync.Once
	started chan struct{}
}

func (r *startedReader) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.started) })
	return r.Reader.Read(p)
}

func TestWithContextStopsAnEndlessRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := &startedReader{Reader: endless{}, started: make(chan struct{})}
	r := WithContext(ctx, src)
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r)
		done <- err
	}()
	<-src.started // cancelled while it reads
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // only against a hang
		t.Fatal("the read never stopped after its context ended")
	}
}

// TestReadLimitedContextEndsABlockedRead: standard input from a pipe
// whose writer never closes it (or a read stuck on a hung NFS server)
// blocks in read(2); checking the context between reads cannot end that,
// so Ctrl-C went unheard. The read must return the context's error after
// the cancel, with the pipe still open.
func TestReadLimitedContextEndsABlockedRead(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	if _, err := pw.Write([]byte(`{"schema":`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // most likely in read(2) by then
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadLimitedContext(ctx, pr, "standard input", 1<<20)
		done <- result{data, err}
	}()
	var data []byte
	select {
	case r := <-done:
		data, err = r.data, r.err
	case <-time.After(30 * time.Second): // the writer never closes: only the cancel ends it
		t.Fatal("ReadLimitedContext never returned after the cancel")
	}
	if !errors.Is(err, context.Canceled) || data != nil {
		t.Fatalf("ReadLimitedContext = %q, %v; want context.Canceled", data, err)
	}
	if !strings.Contains(err.Error(), "standard input") {
		t.Errorf("error %q does not name what was read", err)
	}
}

// TestReadAllContext: a regular file is read whole and bounded as by
// ReadAll; a context already ended reads nothing.
func TestReadAllContext(t *testing.T) {
	name := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(name, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := ReadAllContext(context.Background(), name, 10)
	if err != nil || string(data) != "0123456789" {
		t.Fatalf("ReadAllContext = %q, %v", data, err)
	}
	if _, err := ReadAllContext(context.Background(), name, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit 9: %v, want ErrTooLarge", err)
	}
	if _, err := ReadAllContext(context.Background(), "/dev/zero", 9); !errors.Is(err, ErrNotRegular) {
		t.Errorf("/dev/zero: %v, want ErrNotRegular", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if data, err := ReadAllContext(ctx, name, 10); !errors.Is(err, context.Canceled) || data != nil {
		t.Errorf("ended context: %q, %v; want context.Canceled", data, err)
	}
}
