package vm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/interlink/interlink/internal/atomicfile"
)

// DefaultCacheDir is where kernels and the KVM probe's result are kept
// between labs.
const DefaultCacheDir = "/var/cache/interlink/vm"

// CacheDir returns the cache directory: $INTERLINK_VM_CACHE when set,
// else DefaultCacheDir.
func CacheDir() string {
	if d := os.Getenv("INTERLINK_VM_CACHE"); d != "" {
		return d
	}
	return DefaultCacheDir
}

// ClearCache removes the cache and everything in it. It waits for a
// fetch in progress to finish (the cache's lock).
func ClearCache() error {
	dir := CacheDir()
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	unlock, err := lockCache()
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

var kernelPkgRE = regexp.MustCompile(`(?m)^\s*Depends:\s*(linux-image-[0-9][^\s]*-amd64)\s*$`)

// aptLists is where apt keeps the package lists apt-cache reads.
var aptLists = "/var/lib/apt/lists"

// listsStamp identifies the state of apt's package lists (names, sizes and
// times of the Packages files): apt-cache's answer holds while it holds.
func listsStamp() string {
	files, _ := filepath.Glob(filepath.Join(aptLists, "*Packages*"))
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", filepath.Base(f), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// DebianPackage returns the kernel package Debian's linux-image-amd64
// currently depends on (linux-image-6.1.0-56-amd64), asking apt-cache
// (which takes seconds without apt's binary cache) unless the answer is
// kept in the cache for apt's lists as they are now.
func DebianPackage(ctx context.Context) (string, error) {
	type answer struct {
		Lists   string `json:"lists"`
		Package string `json:"package"`
	}
	kept := filepath.Join(CacheDir(), "debian-kernel.json")
	stamp := listsStamp()
	var a answer
	if data, err := os.ReadFile(kept); err == nil && json.Unmarshal(data, &a) == nil && stamp != "" && a.Lists == stamp {
		return a.Package, nil
	}
	pkg, err := askAptCache(ctx)
	if err == nil && stamp != "" && os.MkdirAll(CacheDir(), 0o755) == nil {
		data, _ := json.Marshal(answer{Lists: stamp, Package: pkg})
		atomicfile.WriteFile(kept, data, atomicfile.Options{})
	}
	return pkg, err
}

func askAptCache(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", "linux-image-amd64").Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("vm: apt-cache not found: the default kernel is Debian's package; give a kernel file (vm: {kernel: FILE, modules: DIR})")
		}
		return "", fmt.Errorf("vm: apt-cache depends linux-image-amd64: %w: %w", err, errStaleLists)
	}
	m := kernelPkgRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("vm: apt-cache names no kernel package for linux-image-amd64: %w", errStaleLists)
	}
	return string(m[1]), nil
}

// errStaleLists marks what apt's package lists may be too old for: the
// package is unknown, or the mirror no longer has the version they name.
var errStaleLists = errors.New("apt's package lists may be stale (apt-get update)")

// DebianKernel returns Debian's current packaged kernel from the cache,
// fetching it first when it is not there: apt-get download of the package
// into a temporary directory of the cache, dpkg-deb -x, and only the image
// and the modules a node needs kept (in CacheDir/kernel/PKG).
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
	dir := filepath.Join(CacheDir(), "kernel", pkg)
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
		root := filepath.Join(tmp, "root")
		if err := run(ctx, tmp, "dpkg-deb", "-x", debs[0], root); err != nil {
			return "", fmt.Errorf("vm: dpkg-deb -x %s: %w", debs[0], err)
		}
		return filepath.Join(tmp, "kernel"), keepKernel(root, filepath.Join(tmp, "kernel"), pkg)
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
	unlock, err := lockCache()
	if err != nil {
		return err
	}
	defer unlock()
	if ready() {
		return nil
	}
	removeStaleFetches()
	tmp, err := os.MkdirTemp(CacheDir(), "fetch-")
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
// the modules a node needs into dir, and
// records them in dir/kernel.json.
func keepKernel(root, dir, pkg string) error {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return fmt.Errorf("vm: package %s has %d kernel images in /boot, want 1", pkg, len(images))
	}
	release := strings.TrimPrefix(filepath.Base(images[0]), "vmlinuz-")
	mods := filepath.Join(root, "lib", "modules", release)
	order, err := ModuleOrder(mods)
	if err != nil {
		return fmt.Errorf("vm: package %s: %w", pkg, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		return fmt.Errorf("vm cache: %w", err)
	}
	k := Kernel{Image: "vmlinuz", Release: release, Source: "debian:" + pkg}
	if err := copyFile(images[0], filepath.Join(dir, "vmlinuz")); err != nil {
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
func readKernel(dir string) (*Kernel, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	var k Kernel
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("vm cache: %s: %w", dir, err)
	}
	k.Image = filepath.Join(dir, k.Image)
	for i, m := range k.Modules {
		k.Modules[i] = filepath.Join(dir, m)
	}
	if err := CheckImage(k.Image); err != nil {
		return nil, err
	}
	return &k, nil
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

// run runs a command in dir and returns its stderr's last line on failure.
func run(ctx context.Context, dir, name string, args ...string) error {
	return runEnv(ctx, dir, nil, name, args...)
}

// runEnv is run with env added to the environment.
func runEnv(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := lastLine(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
