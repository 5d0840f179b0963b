package bintest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// keyEnv are the go env values a binary depends on besides the sources:
// the toolchain, the target, GOFLAGS (build tags, -mod...) and experiments.
var keyEnv = []string{"GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "GOEXPERIMENT",
	"GOAMD64", "GOARM64", "GOARM", "GO386", "GOPPC64", "GORISCV64", "CGO_ENABLED"}

// staleBuild is how old a leftover temporary build directory (of a test
// killed while building) must be before another build removes it.
const staleBuild = time.Hour

// cache is one source state's entry in the cache directory.
type cache struct {
	s     spec
	env   []string
	root  string // the cache directory
	key   string // hash of the toolchain, build env and module sources
	entry string // root/key, holding the binary "interlink"
}

// openCache asks go for the toolchain, its environment and the module, and
// hashes them with the module's sources into the entry's key.
func openCache(s spec, env []string) (*cache, error) {
	cmd := exec.Command("go", append([]string{"env", "-json", "GOCACHE", "GOMOD"}, keyEnv...)...)
	cmd.Dir, cmd.Env = s.dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bintest: go env: %w", err)
	}
	var goEnv map[string]string
	if err := json.Unmarshal(out, &goEnv); err != nil {
		return nil, fmt.Errorf("bintest: go env: %w", err)
	}
	root := s.root
	if root == "" {
		if c := goEnv["GOCACHE"]; c == "" || c == "off" || !filepath.IsAbs(c) {
			return nil, fmt.Errorf("bintest: no usable GOCACHE (%q)", c)
		}
		root = filepath.Join(goEnv["GOCACHE"], "interlink-testbin")
	}
	mod := goEnv["GOMOD"]
	if mod == "" || mod == os.DevNull {
		return nil, errors.New("bintest: not inside a module")
	}
	h := sha256.New()
	fmt.Fprintf(h, "interlink-testbin v1\ngo build -buildvcs=false -ldflags=-s -w -o BIN %s\n", s.pkg)
	for _, k := range keyEnv {
		fmt.Fprintf(h, "%s=%q\n", k, goEnv[k])
	}
	if err := hashSources(h, filepath.Dir(mod)); err != nil {
		return nil, fmt.Errorf("bintest: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("bintest: %w", err)
	}
	key := hex.EncodeToString(h.Sum(nil))[:32]
	return &cache{s: s, env: env, root: root, key: key, entry: filepath.Join(root, key)}, nil
}

// binary places the entry's binary for the caller, building the entry
// first when it is missing. Another source state's build may evict the
// entry between the two steps (another worktree's tests, say): a few
// attempts, then the caller falls back.
func (c *cache) binary(prefix string) (bin string, cleanup func(), built bool, err error) {
	for attempt := 0; attempt < 3; attempt++ {
		bin, cleanup, err = place(prefix, filepath.Join(c.entry, "interlink"))
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return bin, cleanup, built, err
		}
		b, err := c.buildLocked()
		if err != nil {
			return "", nil, built, err
		}
		built = built || b
	}
	return "", nil, built, fmt.Errorf("bintest: cache entry %s evicted %d times while in use", c.entry, 3)
}

// buildLocked builds the entry under a lock of the cache directory, so
// that test packages run at once (go test -p 2) wait for one build instead
// of linking the same binary side by side; a package that got the lock
// after another's build finds the entry and builds nothing (built false).
func (c *cache) buildLocked() (built bool, err error) {
	unlock, err := lockDir(filepath.Join(c.root, ".lock"))
	if err != nil {
		return false, fmt.Errorf("bintest: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(c.entry, "interlink")); err == nil {
		return false, nil
	}
	return true, c.build()
}

// build compiles into a temporary directory of the cache and renames the
// binary into the entry, so a concurrent test package sees either no
// binary or a whole one; then it removes every other entry, keeping only
// this newest one.
func (c *cache) build() error {
	tmp, err := os.MkdirTemp(c.root, ".build-")
	if err != nil {
		return fmt.Errorf("bintest: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "interlink")
	if err := goBuild(c.s, c.env, out); err != nil {
		return err
	}
	if err := os.MkdirAll(c.entry, 0o755); err != nil {
		return fmt.Errorf("bintest: %w", err)
	}
	if err := os.Rename(out, filepath.Join(c.entry, "interlink")); err != nil {
		return fmt.Errorf("bintest: %w", err)
	}
	c.evict()
	return nil
}

// evict removes the entries of other source states and temporary build
// directories left by killed builds. A test using an evicted binary keeps
// it: it runs its own link or copy (see place).
func (c *cache) evict() {
	names, err := os.ReadDir(c.root)
	if err != nil {
		return
	}
	for _, d := range names {
		name := d.Name()
		if name == c.key || name == ".lock" {
			continue
		}
		if strings.HasPrefix(name, ".") {
			// Another package's build in progress, unless long abandoned.
			if info, err := d.Info(); err != nil || time.Since(info.ModTime()) < staleBuild {
				continue
			}
		}
		os.RemoveAll(filepath.Join(c.root, name))
	}
}

// hashSources hashes what go build reads from the module at modDir: every
// non-test .go file, go.mod and go.sum, and every file of a package that
// embeds files (//go:embed), by path and content. Directories go ignores
// (testdata, names starting with "." or "_") and nested modules are left
// out; tests and test data then change no key.
func hashSources(h io.Writer, modDir string) error {
	files := map[string]bool{"go.mod": true}
	if _, err := os.Stat(filepath.Join(modDir, "go.sum")); err == nil {
		files["go.sum"] = true
	}
	var embedders []string
	err := walkModule(modDir, modDir, func(rel string) error {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files[rel] = true
		b, err := os.ReadFile(filepath.Join(modDir, rel))
		if err == nil && bytes.Contains(b, []byte("//go:embed")) {
			embedders = append(embedders, filepath.Join(modDir, filepath.Dir(rel)))
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, dir := range embedders {
		err := walkModule(modDir, dir, func(rel string) error {
			if !strings.HasSuffix(rel, "_test.go") {
				files[rel] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return hashFiles(h, modDir, files)
}

// walkModule calls fn with the module-relative path of every regular file
// under dir that belongs to the module's build.
func walkModule(modDir, dir string, fn func(rel string) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == dir {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return fs.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return fs.SkipDir // another module
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(modDir, path)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel))
	})
}

// hashFiles writes each file's path, length and content to h, in path
// order so the key does not depend on the order of a directory listing.
func hashFiles(h io.Writer, modDir string, files map[string]bool) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(modDir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
	}
	return nil
}
