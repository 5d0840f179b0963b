package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/interlink/interlink/internal/atomicfile"
)

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
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	kept := filepath.Join(dir, "debian-kernel.json")
	stamp := listsStamp()
	var a answer
	if data, err := os.ReadFile(kept); err == nil && json.Unmarshal(data, &a) == nil && stamp != "" && a.Lists == stamp {
		return a.Package, nil
	}
	pkg, err := askAptCache(ctx)
	if err == nil && stamp != "" {
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
