package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDir is where kernels, Debian's sshd and the KVM probe's result
// are kept between labs.
const DefaultDir = "/var/cache/interlink/vm"

// path is the cache directory as configured: $INTERLINK_VM_CACHE when
// set, else DefaultDir, made absolute.
func path() (string, error) {
	dir := DefaultDir
	if d := os.Getenv("INTERLINK_VM_CACHE"); d != "" {
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("vm cache %s: %w", dir, err)
	}
	return abs, nil
}

// Path is the cache directory as configured, for messages: "" when it
// cannot be made absolute.
func Path() string {
	p, _ := path()
	return p
}

// Dir returns the cache directory, made when it is missing, once Trusted
// says root can trust it: $INTERLINK_VM_CACHE when set, else DefaultDir.
// Its error is one line naming the directory at fault and what to do.
func Dir() (string, error) {
	dir, err := path()
	if err != nil {
		return "", err
	}
	if err := Trusted(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("vm cache: %w", err)
	}
	return dir, Trusted(dir) // what MkdirAll made, under the umask
}

// Clear removes the cache and everything in it. It waits for a fetch in
// progress to finish (the cache's lock). It removes nothing from a cache
// it does not trust.
func Clear() error {
	dir, err := path()
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	unlock, err := Lock()
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	for _, e := range entries {
		if e.Name() == ".lock" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("vm cache: %w", err)
		}
	}
	return os.RemoveAll(dir)
}

// DebianKernel returns Debian's current packaged kernel from the cache,
// fetching it first when it is not there: apt-get download of the package
// into a temporary directory of the cache, dpkg-deb -x, and only the image
// and the modules a node needs kept (in Dir/kernel/PKG).
// Nothing is installed on the host. When apt's lists do not have the
// package, or the mirror no longer has the version they name (a fresh
// machine, an old image), it runs apt-get update once and tries again.
// log, when not nil, says what it does.
func DebianKernel(ctx context.Context, log io.Writer) (*Kernel, error) {
	k, err := debianKernel(ctx, log)
	if err == nil || !errors.Is(err, errStaleLists) {
		return k, err
	}
	if log != nil {
		fmt.Fprintf(log, "%v: running apt-get update once\n", err)
	}
	if uerr := run(ctx, "/", "apt-get", "update", "-qq"); uerr != nil {
		return nil, fmt.Errorf("%w (apt-get update: %v)", err, uerr)
	}
	return debianKernel(ctx, log)
}

func debianKernel(ctx context.Context, log io.Writer) (*Kernel, error) {
	pkg, err := DebianPackage(ctx)
	if err != nil {
		return nil, err
	}
	top, err := Dir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(top, "kernel", pkg)
	if k, err := readKernel(dir); err == nil {
		return k, nil
	}
	ready := func() bool { _, err := readKernel(dir); return err == nil }
	err = fillCache(dir, ready, func(tmp string) (string, error) {
		if log != nil {
			fmt.Fprintf(log, "vm: fetching %s into %s (once)\n", pkg, dir)
		}
		if err := run(ctx, tmp, "apt-get", "download", pkg); err != nil {
			return "", fmt.Errorf("vm: apt-get download %s: %w: %w", pkg, err, errStaleLists)
		}
		debs, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
		if len(debs) != 1 {
			return "", fmt.Errorf("vm: apt-get download %s left no package file", pkg)
		}
		sum, err := fileSHA256(debs[0])
		if err != nil {
			return "", err
		}
		root := filepath.Join(tmp, "root")
		if err := run(ctx, tmp, "dpkg-deb", "-x", debs[0], root); err != nil {
			return "", fmt.Errorf("vm: dpkg-deb -x %s: %w", debs[0], err)
		}
		k := &Kernel{Source: "debian:" + pkg, Deb: filepath.Base(debs[0]), DebSHA256: sum}
		return filepath.Join(tmp, "kernel"), keepKernel(root, filepath.Join(tmp, "kernel"), k)
	})
	if err != nil {
		return nil, err
	}
	return readKernel(dir)
}

// fillCache makes the cache's directory dir once, under the cache's lock:
// nothing when ready says it is there (also made by another process while
// this one waited for the lock); else build makes it inside tmp, a fetch-
// directory removed afterwards (and by the next fill when this one is
// killed), and the directory build returns is moved to dir in one rename,
// so dir is whole or absent.
func fillCache(dir string, ready func() bool, build func(tmp string) (string, error)) error {
	top, err := Dir()
	if err != nil {
		return err
	}
	unlock, err := Lock()
	if err != nil {
		return err
	}
	defer unlock()
	if ready() {
		return nil
	}
	removeStaleFetches(top)
	tmp, err := os.MkdirTemp(top, "fetch-")
	if err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	made, err := build(tmp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	os.RemoveAll(dir) // a damaged earlier copy
	if err := os.Rename(made, dir); err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	return nil
}

// keepKernel copies from an unpacked kernel package at root the image and
// the modules a node needs into dir, and records them, with k's source
// and package, in dir/kernel.json.
func keepKernel(root, dir string, k *Kernel) error {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return fmt.Errorf("vm: package %s has %d kernel images in /boot, want 1", k.Deb, len(images))
	}
	k.Release = strings.TrimPrefix(filepath.Base(images[0]), "vmlinuz-")
	order, err := ModuleOrder(filepath.Join(root, "lib", "modules", k.Release))
	if err != nil {
		return fmt.Errorf("vm: package %s: %w", k.Deb, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	k.Image = "vmlinuz"
	if err := copyFile(images[0], filepath.Join(dir, k.Image)); err != nil {
		return err
	}
	for _, f := range order {
		rel := filepath.Join("modules", filepath.Base(f))
		if err := copyFile(f, filepath.Join(dir, rel)); err != nil {
			return err
		}
		k.Modules = append(k.Modules, rel)
	}
	data, _ := json.MarshalIndent(k, "", "  ")
	return os.WriteFile(filepath.Join(dir, "kernel.json"), append(data, '\n'), 0o644)
}

// readKernel reads a kernel kept by keepKernel, its paths made absolute.
// Every path it names must be a regular file inside dir (kernel.json is
// data, and names no file elsewhere on the host), and the package's
// SHA-256 must be recorded (a kernel kept before it was is fetched again).
func readKernel(dir string) (*Kernel, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	var k Kernel
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("vm cache: %s: %w", dir, err)
	}
	if k.DebSHA256 == "" {
		return nil, fmt.Errorf("vm cache: %s: no package SHA-256 recorded", dir)
	}
	confine := func(rel string) (string, error) {
		p := filepath.Join(dir, rel)
		if !filepath.IsLocal(rel) {
			return "", fmt.Errorf("vm cache: %s/kernel.json names %q, outside its directory (lab cache clear)", dir, rel)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return "", fmt.Errorf("vm cache: %s/kernel.json names %q, which is not a regular file there (lab cache clear)", dir, rel)
		}
		return p, nil
	}
	if k.Image, err = confine(k.Image); err != nil {
		return nil, err
	}
	for i, m := range k.Modules {
		if k.Modules[i], err = confine(m); err != nil {
			return nil, err
		}
	}
	if err := CheckImage(k.Image); err != nil {
		return nil, err
	}
	return &k, nil
}

// fileSHA256 is the SHA-256 of a file's content, in hex.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("vm: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// UserKernel is a kernel image the user gives, with the kernel's modules
// tree (/lib/modules/RELEASE) unless virtio is built in ("" then).
func UserKernel(image, modules string) (*Kernel, error) {
	if err := CheckImage(image); err != nil {
		return nil, err
	}
	k := &Kernel{Image: image, Source: image, Release: ImageRelease(image)}
	if modules == "" {
		return k, nil
	}
	order, err := ModuleOrder(modules)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", image, err)
	}
	k.Modules = order
	return k, nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	return nil
}
