// Package inventory gathers what a node has (interfaces, bonds, bridges,
// persisted network configuration, sysctls, counters, NFS mounts) by reading
// files under an injectable root: the live system ("/"), a captured bundle,
// or a test fixturetest. It never changes anything.
package inventory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/interlink/interlink/internal/readfile"
)

// ErrBadRoot is wrapped when the root itself is missing or not usable.
var ErrBadRoot = errors.New("bad root")

// Source reads files under a root directory and remembers every file,
// directory and symbolic link it read, so that `check --collect` can write
// exactly those. Paths given to its methods are absolute paths as on the node
// ("/proc/net/snmp"). The zero value is not usable; use Open or OpenDir. Safe
// for concurrent use.
//
// A root other than "/" is read through an os.Root, so a captured tree or
// bundle cannot make check read files of the machine it runs on through an
// absolute or escaping symbolic link.
type Source struct {
	root    string
	origin  string   // what the user named: the directory or the bundle
	fsys    *os.Root // nil for the live root
	cleanup func() error
	mu      sync.Mutex
	read    map[string]bool   // files and links read
	data    map[string][]byte // content of the files read, for Collect
	links   map[string]bool   // links read as links (not followed)
	dirs    map[string]bool   // directories listed
	made    map[string]bool   // files check wrote itself (record), not on the node
	// unreadable holds what exists but could not be read, with the reason.
	unreadable  map[string]string
	ctx         context.Context // bound by Gather; nil means never stop
	interrupted bool            // a read was refused because ctx ended
}

// OpenDir returns a Source rooted at dir, which must be an existing directory.
func OpenDir(dir string) (*Source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRoot, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrBadRoot, dir)
	}
	s := &Source{root: dir, origin: dir, read: map[string]bool{}, data: map[string][]byte{},
		links: map[string]bool{}, dirs: map[string]bool{}, made: map[string]bool{}, unreadable: map[string]string{}}
	if !s.Live() {
		if s.fsys, err = os.OpenRoot(dir); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadRoot, err)
		}
	}
	return s, nil
}

// Open returns a Source for root, which is either a directory holding a
// node's tree (at least one of proc, sys and etc) or a .tar.gz bundle written
// by Collect. A bundle is unpacked into a temporary directory that Close
// removes. Errors wrap ErrBadRoot.
func Open(root string) (*Source, error) { return OpenContext(context.Background(), root) }

// OpenContext is Open with a context that stops the unpacking of a bundle.
func OpenContext(ctx context.Context, root string) (*Source, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRoot, err)
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is %s, not a directory or a .tar.gz bundle", ErrBadRoot, root, readfile.Kind(st.Mode()))
	}
	if !st.IsDir() {
		dir, err := unpack(ctx, root)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadRoot, root, err)
		}
		s, err := OpenDir(dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.origin = root
		s.cleanup = func() error { return os.RemoveAll(dir) }
		return s, nil
	}
	s, err := OpenDir(root)
	if err != nil {
		return nil, err
	}
	if !s.Live() {
		found := false
		for _, d := range []string{"proc", "sys", "etc"} {
			if st, err := os.Stat(filepath.Join(root, d)); err == nil && st.IsDir() {
				found = true
			}
		}
		if !found {
			s.Close()
			return nil, fmt.Errorf("%w: %s has no proc, sys or etc directory (not a node's tree)", ErrBadRoot, root)
		}
	}
	return s, nil
}

// Close releases the source; for a bundle it removes the unpacked tree.
func (s *Source) Close() error {
	var err error
	if s.fsys != nil {
		err = s.fsys.Close()
	}
	if s.cleanup != nil {
		if cerr := s.cleanup(); err == nil {
			err = cerr
		}
		s.cleanup = nil
	}
	return err
}

// Root returns the directory the source reads from (for a bundle, the
// temporary directory it was unpacked into).
func (s *Source) Root() string { return s.root }

// Origin returns the root as the user named it: "/", a directory or a bundle.
func (s *Source) Origin() string { return s.origin }

// Live reports whether the source is the running system's own root.
func (s *Source) Live() bool { return filepath.Clean(s.root) == "/" }

// Path maps a node path to the path on this machine.
func (s *Source) Path(p string) string {
	return filepath.Join(s.root, filepath.FromSlash(path.Clean("/"+p)))
}

// rel turns a node path into a name relative to the root, for os.Root.
func rel(p string) string {
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		return "."
	}
	return r
}

// ReadFile reads the file at node path p and records it.
// Only regular files are opened, never blocking, and at most MaxFileBytes
// are read; anything else is an error wrapping readfile.ErrNotRegular or
// readfile.ErrTooLarge (a path that should be a file or directory and is a
// named pipe, a device or a socket is reported and never opened: opening a
// FIFO blocks, opening a device can act on it), and is remembered for Unreadable.
func (s *Source) ReadFile(p string) ([]byte, error) { return s.ReadFileMax(p, MaxFileBytes) }

// ReadFileMax is ReadFile with a bound of its own, limit bytes, for a
// file that is small on every real node (a hostname): a larger one is
// refused, wrapping readfile.ErrTooLarge, instead of being read whole.
func (s *Source) ReadFileMax(p string, limit int64) ([]byte, error) {
	if err := s.stopped(); err != nil {
		return nil, err
	}
	b, err := s.readBounded(p, limit)
	s.note(p, err)
	if err == nil {
		s.mu.Lock()
		s.read[path.Clean("/"+p)] = true
		s.data[path.Clean("/"+p)] = b
		s.mu.Unlock()
	}
	return b, err
}

// ReadString reads a small file (a sysfs or procfs value) and trims it.
func (s *Source) ReadString(p string) (string, error) {
	b, err := s.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// ReadDir lists the directory at node path p and records the directory, so
// that a collected bundle keeps it even when none of its entries is read.
// Entries are sorted by name; a path that is not a directory is refused
// unopened like in ReadFile.
func (s *Source) ReadDir(p string) ([]fs.DirEntry, error) {
	if err := s.stopped(); err != nil {
		return nil, err
	}
	ents, err := s.readDir(p)
	s.note(p, err)
	if err == nil {
		s.mu.Lock()
		s.dirs[path.Clean("/"+p)] = true
		s.mu.Unlock()
	}
	return ents, err
}

// Readlink reads the symbolic link at node path p (sysfs uses them for
// masters, drivers and bridge ports) and records it.
func (s *Source) Readlink(p string) (string, error) {
	if err := s.stopped(); err != nil {
		return "", err
	}
	var t string
	var err error
	if s.fsys != nil {
		t, err = s.fsys.Readlink(rel(p))
	} else {
		t, err = os.Readlink(s.Path(p))
	}
	if err == nil {
		s.mu.Lock()
		s.read[path.Clean("/"+p)] = true
		s.links[path.Clean("/"+p)] = true
		s.mu.Unlock()
	}
	return t, err
}

// record keeps b as the content of node path p, a file no node has: a
// fact check asked the kernel for on a live node (a NIC's coalescing, by
// ioctl). A bundle holds it at p, where an audit of the bundle reads it.
func (s *Source) record(p string, b []byte) {
	p = path.Clean("/" + p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read[p] = true
	s.data[p] = b
	s.made[p] = true
}

// PresentNote is what a bundle holds in place of a file whose presence
// check judged but whose content it never read (a shared library).
const PresentNote = "interlink: not collected; only this file's presence was read\n"

// notePresent records that the regular file at node path p exists and
// matters by its name only: a bundle keeps it as a short placeholder
// (PresentNote), so an audit of the bundle sees it where the node had it.
func (s *Source) notePresent(p string) {
	p = path.Clean("/" + p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.read[p] {
		s.read[p] = true
		s.data[p] = []byte(PresentNote)
	}
}

// Glob returns node paths matching pattern (path.Match syntax), sorted.
// Directories are listed as ReadDir does, so a FIFO in the way cannot
// block it.
func (s *Source) Glob(pattern string) ([]string, error) {
	if err := s.stopped(); err != nil {
		return nil, err
	}
	m, err := fs.Glob(globFS{s}, rel(pattern))
	if err != nil {
		return nil, err
	}
	for i := range m {
		m[i] = "/" + m[i]
	}
	return m, nil
}

// Files returns the node paths of files and links read so far, sorted.
func (s *Source) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.read)
}

// Dirs returns the node paths of directories listed so far, sorted.
func (s *Source) Dirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.dirs)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
