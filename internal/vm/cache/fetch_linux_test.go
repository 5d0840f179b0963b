package cache

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/roottest"
)

// testKernel fetches (once) Debian's kernel into the cache, as lab up
// does (refreshing a stale package list once).
func testKernel(t *testing.T) *Kernel {
	t.Helper()
	roottest.Require(t, "the kernel cache: it fetches Debian's kernel")
	for _, p := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not found: these tests need Debian's apt", p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	k, err := DebianKernel(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel %s (%s, %s sha256 %s) in %s", k.Release, k.Source, k.Deb, k.DebSHA256, time.Since(start).Round(time.Millisecond))
	if len(k.DebSHA256) != 64 {
		t.Errorf("the package's SHA-256 is %q, want 64 hex digits", k.DebSHA256)
	}
	return k
}

// TestImageRelease: the release in the header of Debian's image is the
// one its package names.
func TestImageRelease(t *testing.T) {
	k := testKernel(t)
	if got := ImageRelease(k.Image); got != k.Release {
		t.Errorf("ImageRelease = %q, want %q", got, k.Release)
	}
	if got := ImageRelease("kernel.go"); got != "" {
		t.Errorf("ImageRelease(not a kernel) = %q, want \"\"", got)
	}
}

// TestDebianSSHD: the sshd kept from the mmdebstrap image is whole: its
// closure resolves inside the kept directory alone, and nothing of the
// build is left in the cache.
func TestDebianSSHD(t *testing.T) {
	testKernel(t) // root, and what the machine needs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	dir, err := DebianSSHD(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sshd in %s (%s)", dir, time.Since(start).Round(time.Millisecond))
	files, err := programClosure(dir, sshdPath)
	if err != nil {
		t.Fatalf("the kept sshd is not whole: %v", err)
	}
	if len(files) < 5 {
		t.Errorf("sshd needs %d files, want its linker and libraries too: %v", len(files), files)
	}
	if stale, _ := filepath.Glob(filepath.Join(Path(), "fetch-*")); len(stale) > 0 {
		t.Errorf("left in the cache: %v", stale)
	}
}
