package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"

	"github.com/interlink/interlink/internal/readfile"
)

// MaxFileBytes bounds one file read from a root. The largest file check
// reads on a real node is a mount table or mountstats of a host with
// thousands of mounts, a few MiB; a hostile tree cannot make check hold
// more than this per file.
const MaxFileBytes = 16 << 20

// maxDirEntries bounds one directory listing: a real node has at most a
// few thousand interfaces in /sys/class/net. A variable for tests.
var maxDirEntries = 100000

// maxUnreadableListed bounds Inventory.Unreadable; the "files" section
// gives the full count.
const maxUnreadableListed = 1000

var (
	// ErrNothingRead is returned by Gather when not one file of the tree
	// could be read: there is nothing to judge.
	ErrNothingRead = errors.New("nothing could be read")
)

// kindError says what a path is when it is not what check reads.
type kindError struct {
	kind, want string
}

func (e *kindError) Error() string        { return fmt.Sprintf("%s, not a %s (not opened)", e.kind, e.want) }
func (e *kindError) Is(target error) bool { return target == readfile.ErrNotRegular }

// tooManyError refuses a directory with more than maxDirEntries entries.
type tooManyError struct{ max int }

func (e tooManyError) Error() string      { return fmt.Sprintf("more than %d entries (not read)", e.max) }
func (tooManyError) Is(target error) bool { return target == readfile.ErrTooLarge }

// tooLargeError refuses a file larger than the bound of its read.
type tooLargeError struct{ max int64 }

func (e tooLargeError) Error() string {
	if e.max >= 1<<20 && e.max%(1<<20) == 0 {
		return fmt.Sprintf("larger than %d MiB (not read)", e.max>>20)
	}
	return fmt.Sprintf("larger than %d bytes (not read)", e.max)
}
func (tooLargeError) Is(target error) bool { return target == readfile.ErrTooLarge }

func checkKind(fi fs.FileInfo, wantDir bool) error {
	if wantDir && fi.IsDir() || !wantDir && fi.Mode().IsRegular() {
		return nil
	}
	want := "regular file"
	if wantDir {
		want = "directory"
	}
	return &kindError{kind: readfile.Kind(fi.Mode()), want: want}
}

// open opens the file (or, with wantDir, the directory) at node path p for
// reading without ever blocking: the path is stat'ed first (following
// links, inside the root for a tree) and anything but a regular file or
// directory is refused unopened; it is then opened with O_NONBLOCK and
// checked again, so a file swapped for a FIFO in between cannot block
// either.
func (s *Source) open(p string, wantDir bool) (*os.File, error) {
	var fi fs.FileInfo
	var err error
	if s.fsys != nil {
		fi, err = s.fsys.Stat(rel(p))
	} else {
		fi, err = os.Stat(s.Path(p))
	}
	if err != nil {
		return nil, err
	}
	if err := checkKind(fi, wantDir); err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	var f *os.File
	if s.fsys != nil {
		f, err = s.fsys.OpenFile(rel(p), flag, 0)
	} else {
		f, err = os.OpenFile(s.Path(p), flag, 0)
	}
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = checkKind(fi, wantDir)
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return f, nil
}

// readBounded reads the regular file at node path p, at most limit bytes.
func (s *Source) readBounded(p string, limit int64) ([]byte, error) {
	f, err := s.open(p, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readfile.ReadLimited(f, p, limit)
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: tooLargeError{limit}}
	}
	return b, err
}

// readDir lists the directory at node path p without blocking, sorted by
// name, at most maxDirEntries entries.
func (s *Source) readDir(p string) ([]fs.DirEntry, error) {
	f, err := s.open(p, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(maxDirEntries + 1)
	if err == io.EOF {
		err = nil // an empty directory
	}
	if len(ents) > maxDirEntries {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: tooManyError{maxDirEntries}}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// bind makes every later read of s fail with ctx's error once ctx ends, so
// a long walk of a large tree stops when the user interrupts it.
func (s *Source) bind(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
}

// unbind ends bind: later reads no longer follow a context.
func (s *Source) unbind() {
	s.mu.Lock()
	s.ctx = nil
	s.mu.Unlock()
}

// stopped returns the bound context's error, remembering that a read was
// cut short.
func (s *Source) stopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		return nil
	}
	err := s.ctx.Err()
	if err != nil {
		s.interrupted = true
	}
	return err
}

// note records the outcome of a read of node path p: a file or directory
// that exists but could not be read is remembered with its reason, so the
// report can name what it skipped. Absence is not a problem (a tree from
// another system lacks files) and neither is an interruption.
func (s *Source) note(p string, err error) {
	if err == nil || isNotExist(err) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p = path.Clean("/" + p)
	if _, ok := s.unreadable[p]; !ok {
		s.unreadable[p] = unwrapPathError(err).Error()
	}
}

// Unreadable returns the files and directories that exist under the root
// but could not be read, sorted by path.
func (s *Source) Unreadable() []Unreadable {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Unreadable, 0, len(s.unreadable))
	for p, r := range s.unreadable {
		out = append(out, Unreadable{Path: p, Reason: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// globFS is the source as an fs.FS for fs.Glob: directories are listed
// with readDir and files stat'ed, never opened blindly, so a FIFO where a
// directory should be cannot block a glob.
type globFS struct{ s *Source }

func (g globFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := g.s.open("/"+name, true)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (g globFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	ents, err := g.s.readDir("/" + name)
	g.s.note("/"+name, err)
	return ents, err
}

func (g globFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if g.s.fsys != nil {
		return g.s.fsys.Stat(rel(name))
	}
	return os.Stat(g.s.Path(name))
}
