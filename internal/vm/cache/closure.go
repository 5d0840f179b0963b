package cache

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// libDirs are where sshd's libraries are looked for in the image (Debian's
// multiarch directories first).
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// guestLibDir is where the guest finds sshd's libraries.
const guestLibDir = "/lib/x86_64-linux-gnu"

// resolveIn follows the symbolic links of path inside the tree at root (an
// absolute link points into the tree, not to the host) and returns the
// path in the tree of the file it ends at.
func resolveIn(root, path string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		fi, err := os.Lstat(filepath.Join(root, path))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		t, err := os.Readlink(filepath.Join(root, path))
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(path), t)
		}
		path = filepath.Clean(t)
	}
	return "", fmt.Errorf("%s: too many symbolic links", path)
}

// programClosure returns the files a dynamically linked program of the
// tree at root needs: the program, its interpreter and every library it
// needs, transitively, as path in the tree -> path in the guest.
func programClosure(root, prog string) (map[string]string, error) {
	out := map[string]string{}
	seen := map[string]bool{}
	add := func(path, guest string) (string, error) {
		real, err := resolveIn(root, path)
		if err != nil {
			return "", err
		}
		out[real] = guest
		return real, nil
	}
	first, err := add(prog, prog)
	if err != nil {
		return nil, fmt.Errorf("vm: %s in %s: %w", prog, root, err)
	}
	queue := []string{first}
	for len(queue) > 0 {
		f, err := elf.Open(filepath.Join(root, queue[0]))
		if err != nil {
			return nil, fmt.Errorf("vm: %s: %w", queue[0], err)
		}
		queue = queue[1:]
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				p.ReadAt(b, 0)
				interp := strings.TrimRight(string(b), "\x00")
				if _, err := add(interp, interp); err != nil {
					f.Close()
					return nil, fmt.Errorf("vm: %s's interpreter %s: %w", prog, interp, err)
				}
			}
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("vm: %s: %w", prog, err)
		}
		for _, lib := range libs {
			if seen[lib] {
				continue
			}
			seen[lib] = true
			found := ""
			for _, d := range libDirs {
				if real, err := add(filepath.Join(d, lib), filepath.Join(guestLibDir, lib)); err == nil {
					found = real
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("vm: %s needs %s, not found in %s under %s", prog, lib, strings.Join(libDirs, ", "), root)
			}
			queue = append(queue, found)
		}
	}
	return out, nil
}
