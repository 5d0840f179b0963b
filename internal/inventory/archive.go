package inventory

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/readfile"
)

// Limits on a bundle, so a corrupt or hostile archive cannot fill the disk:
// a real bundle is a few hundred files and well under a megabyte.
const (
	maxBundleEntries = 100000
	maxBundleBytes   = 256 << 20
	maxLinkHops      = 40
)

// Collect writes the files, links and directories the source has read as a
// gzip-compressed tar archive that Open accepts as a root. File contents are
// the bytes check read (not a second read), so the bundle reproduces the
// audit exactly. Symbolic links on the way to a file (/sys/class/net/eth0 ->
// ../../devices/..., /proc/net -> self/net) are kept as links, so the
// bundle has the shape of the node; /proc/self is stored as a directory
// rather than as a link to the collecting process's pid.
func (s *Source) Collect(w io.Writer, modTime time.Time) error {
	s.mu.Lock()
	files := sortedKeys(s.read)
	dirs := sortedKeys(s.dirs)
	data := make(map[string][]byte, len(s.data))
	for k, v := range s.data {
		data[k] = v
	}
	asLink := make(map[string]bool, len(s.links))
	for k := range s.links {
		asLink[k] = true
	}
	made := make(map[string]bool, len(s.made))
	for k := range s.made {
		made[k] = true
	}
	s.mu.Unlock()

	links := map[string]string{} // node path -> target, relative
	regular := map[string][]byte{}
	directories := map[string]bool{}
	for _, p := range files {
		if made[p] {
			regular[p] = data[p] // not on the node: nothing to resolve
			continue
		}
		real, err := s.resolve(p, asLink[p], links)
		if err != nil {
			return fmt.Errorf("collect %s: %w", p, err)
		}
		if asLink[p] {
			t, err := s.rawReadlink(p)
			if err != nil {
				return fmt.Errorf("collect %s: %w", p, err)
			}
			links[real] = relativeTarget(real, t)
			continue
		}
		regular[real] = data[p]
	}
	for _, d := range dirs {
		real, err := s.resolve(d, false, links)
		if err != nil {
			continue // listed once, gone now: nothing to keep
		}
		directories[real] = true
	}

	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	type entry struct {
		name string
		hdr  *tar.Header
		data []byte
	}
	var entries []entry
	for d := range directories {
		if d == "/" {
			continue
		}
		entries = append(entries, entry{d, &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755}, nil})
	}
	for l, t := range links {
		entries = append(entries, entry{l, &tar.Header{Typeflag: tar.TypeSymlink, Linkname: t, Mode: 0o777}, nil})
	}
	for f, b := range regular {
		entries = append(entries, entry{f, &tar.Header{Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}, b})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	for _, e := range entries {
		e.hdr.Name = strings.TrimPrefix(e.name, "/")
		if e.hdr.Typeflag == tar.TypeDir {
			e.hdr.Name += "/"
		}
		e.hdr.ModTime = modTime
		e.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(e.hdr); err != nil {
			return fmt.Errorf("collect: %w", err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("collect: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	return zw.Close()
}

func (s *Source) rawLstat(p string) (fs.FileInfo, error) {
	if s.fsys != nil {
		return s.fsys.Lstat(rel(p))
	}
	return os.Lstat(s.Path(p))
}

func (s *Source) rawReadlink(p string) (string, error) {
	if s.fsys != nil {
		return s.fsys.Readlink(rel(p))
	}
	return os.Readlink(s.Path(p))
}

// resolve walks node path p component by component, records every symbolic
// link on the way in links, and returns the path of the real file. With
// keepLast the last component is not followed (it was read as a link).
func (s *Source) resolve(p string, keepLast bool, links map[string]string) (string, error) {
	comps := splitPath(p)
	cur := "/"
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		next := path.Join(cur, c)
		if next == "/proc/self" || next == "/proc/thread-self" {
			cur = next // a directory in the bundle, not a pid
			continue
		}
		if len(comps) == 0 && keepLast {
			cur = next
			break
		}
		fi, err := s.rawLstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", errors.New("too many levels of symbolic links")
		}
		t, err := s.rawReadlink(next)
		if err != nil {
			return "", err
		}
		links[next] = relativeTarget(next, t)
		target := t
		if !path.IsAbs(t) {
			target = path.Join(path.Dir(next), t)
		}
		comps = append(splitPath(target), comps...)
		cur = "/"
	}
	return cur, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(path.Clean("/"+p), "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// relativeTarget turns an absolute link target into one relative to the
// link's directory, so the bundle never points outside itself.
func relativeTarget(link, target string) string {
	if !path.IsAbs(target) {
		return target
	}
	from := splitPath(path.Dir(link))
	to := splitPath(target)
	i := 0
	for i < len(from) && i < len(to) && from[i] == to[i] {
		i++
	}
	parts := make([]string, 0, len(from)-i+len(to)-i)
	for range from[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, to[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// unpack extracts a bundle into a new temporary directory and returns it.
// Only directories, regular files and relative symbolic links that stay
// inside the bundle are accepted; anything else makes the bundle malformed
// and the temporary directory is removed. It stops when ctx ends.
func unpack(ctx context.Context, file string) (string, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s, not a directory or a .tar.gz bundle", readfile.Kind(st.Mode()))
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("not a directory or a .tar.gz bundle: %w", err)
	}
	defer zr.Close()
	dir, err := os.MkdirTemp("", "interlink-root-")
	if err != nil {
		return "", err
	}
	// extract reports its own errors; dir is not a named result, so no
	// "return" can clear it before this removal runs.
	if err := extract(ctx, zr, dir); err != nil {
		if rerr := os.RemoveAll(dir); rerr != nil {
			return "", fmt.Errorf("%w (and removing %s: %v)", err, dir, rerr)
		}
		return "", err
	}
	return dir, nil
}

// extract writes the entries of a bundle under dir.
func extract(ctx context.Context, zr io.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	// Reads fail once ctx ends, so a large entry stops copying.
	tr := tar.NewReader(readfile.WithContext(ctx, zr))
	var total int64
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("bundle: unpacking stopped: %w", cerr)
			}
			return fmt.Errorf("bundle: %w", err)
		}
		if n++; n > maxBundleEntries {
			return fmt.Errorf("bundle: more than %d entries", maxBundleEntries)
		}
		name := path.Clean(h.Name)
		if path.IsAbs(h.Name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("bundle: entry %q leaves the bundle", h.Name)
		}
		if name == "." {
			continue
		}
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("bundle: %s: %w", name, err)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("bundle: %s: %w", name, err)
			}
		case tar.TypeReg:
			if total += h.Size; total > maxBundleBytes {
				return fmt.Errorf("bundle: more than %d bytes", maxBundleBytes)
			}
			w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return fmt.Errorf("bundle: %s: %w", name, err)
			}
			_, cerr := io.Copy(w, io.LimitReader(tr, h.Size))
			if err := w.Close(); cerr == nil {
				cerr = err
			}
			if cerr != nil {
				return fmt.Errorf("bundle: %s: %w", name, cerr)
			}
		case tar.TypeSymlink:
			t := h.Linkname
			resolved := path.Join(path.Dir(name), t)
			if path.IsAbs(t) || resolved == ".." || strings.HasPrefix(resolved, "../") {
				return fmt.Errorf("bundle: link %s -> %s leaves the bundle", name, t)
			}
			if err := root.Symlink(t, name); err != nil {
				return fmt.Errorf("bundle: %s: %w", name, err)
			}
		default:
			return fmt.Errorf("bundle: %s: unsupported entry type %q", name, h.Typeflag)
		}
	}
	if n == 0 {
		return errors.New("bundle is empty")
	}
	return nil
}
