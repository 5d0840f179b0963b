// Package readfile opens the files a person hands to interlink's readers
// (AWR reports, saved results, cluster runs, bundles) so that no file can
// hang them: only regular files are read (a directory, a FIFO, a socket or
// a device such as /dev/zero is refused before a byte is read, and a FIFO
// is never opened in a way that blocks), a whole-file read is bounded, and
// a streaming read stops within one read of its context ending (Ctrl-C,
// SIGTERM).
//
// Errors wrap ErrNotRegular or ErrTooLarge (or the os error) and name the
// file, so a command prints them as its one line.
package readfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular marks a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a file larger than the bound its reader allows.
var ErrTooLarge = errors.New("file too large")

// Kind names the type of a file mode: "a directory", "a named pipe
// (FIFO)", "a character device" and so on.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

func notRegular(name string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s: %w", name, Kind(m), ErrNotRegular)
}

// Open opens the regular file name for reading. The path is stat'ed first
// (following links) and anything else is refused unopened; it is then
// opened with O_NONBLOCK (a FIFO swapped in between cannot block the open)
// and checked again. The caller closes the file.
func Open(name string) (*os.File, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
		err = notRegular(name, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadAll reads the regular file name whole, at most limit bytes; a larger
// file is an error wrapping ErrTooLarge.
func ReadAll(name string, limit int64) ([]byte, error) {
	f, err := openLimited(name, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, name, limit)
}

// openLimited is Open that refuses, unread, a file already larger than
// limit: reading one to the limit first cost a buffer of up to twice the
// limit (180 MB of memory to refuse a 200 MB file against 64 MiB). A file
// that grows while it is read is still cut by ReadLimited.
func openLimited(name string, limit int64) (*os.File, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		f.Close()
		return nil, tooLarge(name, limit)
	}
	return f, nil
}

func tooLarge(name string, limit int64) error {
	return fmt.Errorf("%s is larger than %d bytes: %w", name, limit, ErrTooLarge)
}

// ReadLimited reads r whole, at most limit bytes (name is for the error);
// more is an error wrapping ErrTooLarge.
func ReadLimited(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(name, limit)
	}
	return data, nil
}

// WithContext returns a reader of r whose Read fails with ctx's error once
// ctx has ended: a loop reading a long file stops at its next read after
// Ctrl-C instead of reading to the end.
func WithContext(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadAllContext is ReadAll that returns once ctx ends (Ctrl-C, SIGTERM)
// with an error wrapping ctx's, even while a read is blocked: on a slow or
// hung NFS server one read of a 64 MiB file can take seconds or never
// return, and checking ctx between reads (WithContext) cannot cut that.
// The read goes on in its own goroutine, which stops at its next read and
// closes the file.
func ReadAllContext(ctx context.Context, name string, limit int64) ([]byte, error) {
	f, err := openLimited(name, limit)
	if err != nil {
		return nil, err
	}
	return readAsync(ctx, f, name, limit, true)
}

// ReadLimitedContext is ReadLimited that returns once ctx ends, even while
// a read of r is blocked (standard input from a terminal or a pipe whose
// writer never closes it). r is left to the goroutine reading it.
func ReadLimitedContext(ctx context.Context, r io.Reader, name string, limit int64) ([]byte, error) {
	return readAsync(ctx, r, name, limit, false)
}

func readAsync(ctx context.Context, r io.Reader, name string, limit int64, closeAfter bool) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1) // buffered: an abandoned reader never blocks
	go func() {
		data, err := ReadLimited(WithContext(ctx, r), name, limit)
		if c, ok := r.(io.Closer); ok && closeAfter {
			c.Close()
		}
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %s: %w", name, ctx.Err())
		}
		return res.data, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("read %s: %w", name, ctx.Err())
	}
}
