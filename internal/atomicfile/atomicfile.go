// Package atomicfile replaces a file in one step: a reader of the path sees
// the old file or the whole new one, never half of it, also after a crash.
//
// The new content is written to a temporary file in the target's own
// directory (a rename only replaces atomically within one file system),
// given the mode asked for (os.CreateTemp's 0600 would otherwise stay),
// flushed to disk, renamed over the target, and the directory is flushed
// so that the rename itself survives a power cut. On any error the
// temporary file is removed and the target is left as it was.
//
// Only a regular file (or nothing) is replaced: a rename over /dev/null,
// a named pipe or a socket would put a regular file in its place, so such
// a target is refused with readfile.ErrNotRegular before anything is
// written (a device, a named pipe, a socket or a directory; a link is
// followed).
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/interlink/interlink/internal/readfile"
)

// checkTarget refuses a path that exists and is not a regular file. It
// follows links, so /dev/stdout (a link to the process's descriptor) is
// judged by what it points at.
func checkTarget(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // absent, or the rename will say why not
	}
	return fmt.Errorf("%s is %s: %w", path, readfile.Kind(fi.Mode()), readfile.ErrNotRegular)
}

// Resolve is the file that path names when it is a link: the rename
// replaces that file and the link stays. A rename over the link itself
// put a regular file in its place (as root, "-o /dev/stdout > out.html"
// replaced /dev/stdout and left out.html empty). A dangling link, or
// one that ends in no path (a pipe's "pipe:[...]"), is path itself.
func Resolve(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if p, err := filepath.EvalSymlinks(path); err == nil {
			return p
		}
	}
	return path
}

// Options says how Write makes its file. The zero value writes a 0644
// file under a random temporary name.
type Options struct {
	// Mode is the new file's permission bits; 0 means 0644. The process's
	// umask does not apply: the file gets exactly this mode.
	Mode os.FileMode
	// Temp, when set, is the base name of the temporary file (in the
	// target's directory) instead of a random one, for callers that look
	// for what an interrupted write left (lab's NAME.json.tmp). Such a
	// caller must not write the same path from two processes at once.
	Temp string
	// BeforeRename, when set, runs once the temporary file is complete
	// and synced, before the rename (a test's crash point); its error
	// ends the write like any other.
	BeforeRename func() error
}

// ops is the file system Write uses, a seam so a test can record the
// order of the operations (the data synced before the rename, the
// directory synced after it) while they still run for real.
type ops struct {
	create  func(dir, pattern, fixed string) (*os.File, error)
	chmod   func(f *os.File, mode os.FileMode) error
	sync    func(f *os.File) error
	close   func(f *os.File) error
	rename  func(from, to string) error
	syncDir func(dir string) error
	remove  func(name string) error
}

var osOps = ops{
	create: createTemp,
	chmod:  func(f *os.File, mode os.FileMode) error { return f.Chmod(mode) },
	sync:   func(f *os.File) error { return f.Sync() },
	close:  func(f *os.File) error { return f.Close() },
	rename: os.Rename,
	syncDir: func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		return err
	},
	remove: os.Remove,
}

// tempFlags open a temporary file that is new: never one that is there,
// nor a link planted under its name (in a directory others can write, a
// link at the temporary name would make the write land where it points).
const tempFlags = os.O_RDWR | os.O_CREATE | os.O_EXCL | noFollow

// createTemp makes the temporary file in dir: named fixed (what an
// earlier, interrupted write left there is removed first, a link itself
// and not what it points at), or pattern with its "*" replaced by a random
// number, tried anew while the name is taken.
func createTemp(dir, pattern, fixed string) (*os.File, error) {
	if fixed != "" {
		p := filepath.Join(dir, fixed)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return os.OpenFile(p, tempFlags, 0o600)
	}
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for try := 0; ; try++ {
		p := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)+suffix)
		f, err := os.OpenFile(p, tempFlags, 0o600)
		if errors.Is(err, os.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// fs is the seam; tests swap it.
var fs = osOps

// Write replaces path with what write writes, through a temporary file
// beside it (see the package comment). write's error, or the first error
// of the file system, is returned (wrapped with the step that failed) and
// path is left untouched.
func Write(path string, opt Options, write func(w io.Writer) error) (err error) {
	mode := opt.Mode
	if mode == 0 {
		mode = 0o644
	}
	if err := checkTarget(path); err != nil {
		return err
	}
	real := Resolve(path)
	dir := filepath.Dir(real)
	f, err := fs.create(dir, "."+filepath.Base(path)+".*", opt.Temp)
	if err != nil {
		return fmt.Errorf("create a temporary file in %s: %w", dir, cause(err))
	}
	tmp, closed := f.Name(), false
	defer func() {
		if err != nil {
			if !closed {
				fs.close(f)
			}
			fs.remove(tmp)
		}
	}()
	if err = fs.chmod(f, mode.Perm()); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err = write(f); err != nil {
		return err
	}
	if err = fs.sync(f); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	closed = true
	if err = fs.close(f); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if opt.BeforeRename != nil {
		if err = opt.BeforeRename(); err != nil {
			return err
		}
	}
	// Again: a pipe or device may have taken the name while we wrote.
	if err = checkTarget(path); err != nil {
		return err
	}
	if err = fs.rename(tmp, real); err != nil {
		return fmt.Errorf("rename to %s: %w", path, cause(err))
	}
	// The file is in place; a failed directory sync means the rename may
	// not survive a power cut, which the caller should hear (the target
	// then holds the new content).
	// Some systems cannot sync a directory (EINVAL): nothing more to do.
	if serr := fs.syncDir(dir); serr != nil && !errors.Is(serr, syscall.EINVAL) && !errors.Is(serr, errors.ErrUnsupported) {
		return fmt.Errorf("sync directory %s: %w", dir, serr)
	}
	return nil
}

// cause strips an *os.PathError or *os.LinkError of the paths it repeats
// (the message names them once).
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// WriteFile replaces path with data (see Write).
func WriteFile(path string, data []byte, opt Options) error {
	return Write(path, opt, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}
