package cache

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Errors callers test with errors.Is.
var (
	// ErrNotKernel: the file is not a bootable x86 Linux kernel image.
	ErrNotKernel = errors.New("not a Linux kernel image (no bzImage header)")
	// ErrNoVirtio: the kernel has neither built in nor as modules what a
	// lab node's links need (virtio_pci and virtio_net).
	ErrNoVirtio = errors.New("kernel lacks virtio networking")
)

// Kernel is a kernel a VM boots: its image and the modules its links
// need, in load order.
type Kernel struct {
	Image   string   `json:"image"`             // the bzImage
	Release string   `json:"release,omitempty"` // uname -r, when known (6.1.0-56-amd64)
	Source  string   `json:"source"`            // the Debian package, or the file given
	Modules []string `json:"modules,omitempty"` // .ko files, dependencies first; none when built in
	// Deb and DebSHA256 are the package file a Debian kernel was
	// unpacked from and its SHA-256 (apt-get download checked it against
	// the signed lists); empty for a kernel the user gives.
	Deb       string `json:"deb,omitempty"`
	DebSHA256 string `json:"deb_sha256,omitempty"`
}

// needed are the modules a node's links need; their dependencies are read
// from the modules themselves.
var needed = []string{"virtio_pci", "virtio_net"}

// CheckImage reports whether path is an x86 Linux kernel image: the
// boot protocol's "HdrS" magic at offset 0x202 (Documentation/x86/boot).
func CheckImage(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("kernel %s: %w", path, err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0x202); err != nil || string(magic[:]) != "HdrS" {
		return fmt.Errorf("kernel %s: %w", path, ErrNotKernel)
	}
	return nil
}

// ImageRelease reads the release (uname -r) from a bzImage's header: the
// boot protocol's kernel_version field (0x20E) points to the version
// string, 0x200 bytes further. "" when the image has none.
func ImageRelease(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// The magic (0x202) and kernel_version (0x20E) in one read.
	var hdr [0x10]byte
	if _, err := f.ReadAt(hdr[:], 0x200); err != nil || string(hdr[2:6]) != "HdrS" {
		return ""
	}
	p := int64(hdr[0xE]) | int64(hdr[0xF])<<8
	if p == 0 {
		return ""
	}
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, p+0x200)
	v, _, _ := bytes.Cut(buf[:n], []byte{0})
	if f := strings.Fields(string(v)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// ModuleOrder finds the modules a node needs under dir (a kernel's
// /lib/modules/RELEASE tree) and returns their files with every
// dependency before its user. A module listed in dir/modules.builtin is
// built into the kernel and needs no file. It returns ErrNoVirtio naming
// the first module that is neither.
func ModuleOrder(dir string) ([]string, error) {
	files := map[string]string{} // module name -> file
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isModule(p) {
			files[ModName(filepath.Base(p))] = p
		}
		return nil
	})
	builtin := map[string]bool{}
	if f, err := os.Open(filepath.Join(dir, "modules.builtin")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			builtin[ModName(filepath.Base(strings.TrimSpace(sc.Text())))] = true
		}
		f.Close()
	}
	var order []string
	seen := map[string]bool{}
	var visit func(name string, depth int) error
	visit = func(name string, depth int) error {
		if seen[name] || builtin[name] {
			return nil
		}
		seen[name] = true
		file, ok := files[name]
		if !ok {
			return fmt.Errorf("%w: no module %s under %s and not built in", ErrNoVirtio, name, dir)
		}
		deps, err := moduleDepends(file)
		if err != nil {
			return err
		}
		if depth > 32 {
			return fmt.Errorf("module %s: dependencies nest too deep", name)
		}
		for _, d := range deps {
			if err := visit(d, depth+1); err != nil {
				return err
			}
		}
		order = append(order, file)
		return nil
	}
	for _, m := range needed {
		if err := visit(m, 0); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleSuffixes are the module files a modules tree may hold: plain, or
// compressed as Oracle Linux (xz), Fedora (xz, zstd) and others ship them.
var moduleSuffixes = []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"}

func isModule(path string) bool {
	for _, s := range moduleSuffixes {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// ModName turns a module file name into the module's name as depends=
// spells it (virtio-net.ko.xz and virtio_net.ko are both virtio_net).
func ModName(file string) string {
	for _, s := range moduleSuffixes[1:] {
		file = strings.TrimSuffix(file, s)
	}
	return strings.ReplaceAll(strings.TrimSuffix(file, ".ko"), "-", "_")
}

// ReadModule returns a module file's ELF bytes, decompressed: gzip here,
// xz and zstd by the host's xz and zstd (busybox's insmod in the guest
// takes plain modules only).
func ReadModule(file string) ([]byte, error) {
	var tool string
	switch {
	case strings.HasSuffix(file, ".ko.gz"):
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", file, err)
		}
		return io.ReadAll(io.LimitReader(zr, 256<<20))
	case strings.HasSuffix(file, ".ko.xz"):
		tool = "xz"
	case strings.HasSuffix(file, ".ko.zst"):
		tool = "zstd"
	default:
		return os.ReadFile(file)
	}
	out, err := exec.Command(tool, "-dc", file).Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("module %s is compressed with %s: %s not found (install xz-utils or zstd)", file, tool, tool)
	}
	if err != nil {
		return nil, fmt.Errorf("module %s: %s -dc: %w", file, tool, err)
	}
	return out, nil
}

// moduleDepends reads the depends= entry of a module's .modinfo section.
func moduleDepends(file string) ([]string, error) {
	data, err := ReadModule(file)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", file, err)
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("module %s: no .modinfo section", file)
	}
	info, err := io.ReadAll(s.Open())
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", file, err)
	}
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			var out []string
			for _, d := range strings.Split(string(v), ",") {
				if d = strings.TrimSpace(d); d != "" {
					out = append(out, ModName(d))
				}
			}
			return out, nil
		}
	}
	return nil, nil
}
