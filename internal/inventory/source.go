// Package inventory gathers what a node has (interfaces, bonds, bridges,
// persisted network configuration, sysctls, counters, NFS mounts) by reading
// files under an injectable root: the live system ("/"), a captured bundle,
// or a test fixture. It never changes anything.
package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ErrBadRoot is wrapped when the root itself is missing or not usable.
var ErrBadRoot = errors.New("bad root")

// Source reads files under a root directory and remembers every file it
// read, so that `check --collect` can write exactly those files. Paths given
// to its methods are absolute paths as on the node ("/proc/net/snmp"). The
// zero value is not usable; use OpenDir. Safe for concurrent use.
type Source struct {
	root string
	mu   sync.Mutex
	read map[string]bool
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
	return &Source{root: dir, read: map[string]bool{}}, nil
}

// Root returns the directory the source reads from.
func (s *Source) Root() string { return s.root }

// Live reports whether the source is the running system's own root.
func (s *Source) Live() bool { return filepath.Clean(s.root) == "/" }

// Path maps a node path to the path on this machine.
func (s *Source) Path(p string) string {
	return filepath.Join(s.root, filepath.FromSlash(path.Clean("/"+p)))
}

// ReadFile reads the file at node path p and records it.
func (s *Source) ReadFile(p string) ([]byte, error) {
	b, err := os.ReadFile(s.Path(p))
	if err == nil {
		s.note(p)
	}
	return b, err
}

// ReadString reads a small file (a sysfs or procfs value) and trims it.
func (s *Source) ReadString(p string) (string, error) {
	b, err := s.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// ReadDir lists the directory at node path p.
func (s *Source) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(s.Path(p)) }

// Readlink reads the symbolic link at node path p (sysfs uses them for
// masters, drivers and bridge ports) and records it.
func (s *Source) Readlink(p string) (string, error) {
	t, err := os.Readlink(s.Path(p))
	if err == nil {
		s.note(p)
	}
	return t, err
}

// Glob returns node paths matching pattern (path.Match syntax).
func (s *Source) Glob(pattern string) ([]string, error) {
	m, err := filepath.Glob(s.Path(pattern))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for _, p := range m {
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			continue
		}
		out = append(out, "/"+filepath.ToSlash(rel))
	}
	return out, nil
}

func (s *Source) note(p string) {
	s.mu.Lock()
	s.read[path.Clean("/"+p)] = true
	s.mu.Unlock()
}

// Files returns the node paths read so far, sorted.
func (s *Source) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.read))
	for p := range s.read {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
