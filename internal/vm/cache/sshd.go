package cache

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hostSuite is the Debian release of this host (VERSION_CODENAME in
// /etc/os-release), the one guest images are built from; bookworm when it
// says none.
func hostSuite() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "bookworm"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VERSION_CODENAME="); ok && strings.Trim(v, `"`) != "" {
			return strings.Trim(v, `"`)
		}
	}
	return "bookworm"
}

// DebianSSHD returns a directory holding Debian's OpenSSH server and the
// files it needs, at their paths in a guest: usr/sbin/sshd, its dynamic
// linker and its libraries. They come from a Debian image that mmdebstrap
// builds once (variant essential with openssh-server, this host's release)
// and are kept in Dir/sshd/SUITE (about 10 MB); the image itself
// (160 MB) is removed. log, when not nil, says what it does.
func DebianSSHD(ctx context.Context, log io.Writer) (string, error) {
	suite := hostSuite()
	top, err := Dir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(top, "sshd", suite)
	if _, err := os.Stat(filepath.Join(dir, sshdPath)); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return "", fmt.Errorf("vm: the guests' sshd comes from a Debian image mmdebstrap builds: mmdebstrap not found (apt-get install mmdebstrap)")
	}
	ready := func() bool { _, err := os.Stat(filepath.Join(dir, sshdPath)); return err == nil }
	err = fillCache(dir, ready, func(tmp string) (string, error) {
		if log != nil {
			fmt.Fprintf(log, "vm: building a Debian %s image with openssh-server (mmdebstrap, once) for %s\n", suite, dir)
		}
		image := filepath.Join(tmp, "image")
		// mmdebstrap's own temporary directory goes in tmp too: a kill
		// leaves nothing in /tmp, and the next build removes tmp.
		err := runEnv(ctx, tmp, []string{"TMPDIR=" + tmp}, "mmdebstrap", "--variant=essential", "--include=openssh-server", suite, image)
		if err != nil {
			return "", fmt.Errorf("vm: mmdebstrap %s: %w", suite, err)
		}
		keep := filepath.Join(tmp, "keep")
		return keep, keepProgram(image, sshdPath, keep)
	})
	if err != nil {
		return "", err
	}
	return dir, nil
}

// keepProgram copies a program of the tree at image and every file it
// needs (programClosure) into keep, at their paths in the guest.
func keepProgram(image, prog, keep string) error {
	files, err := programClosure(image, prog)
	if err != nil {
		return err
	}
	for real, guest := range files {
		to := filepath.Join(keep, guest)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return fmt.Errorf("vm cache: %w", err)
		}
		fi, err := os.Stat(filepath.Join(image, real))
		if err != nil {
			return fmt.Errorf("vm: %w", err)
		}
		if err := copyFile(filepath.Join(image, real), to); err != nil {
			return err
		}
		if err := os.Chmod(to, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("vm cache: %w", err)
		}
	}
	return nil
}

// sshdPath is OpenSSH's server in a Debian tree, and so in the guest
// (guest.SSHDPath runs it from there).
const sshdPath = "/usr/sbin/sshd"

// removeStaleFetches removes what a fetch killed halfway left in the
// cache top; the caller holds the cache's lock.
func removeStaleFetches(top string) {
	stale, _ := filepath.Glob(filepath.Join(top, "fetch-*"))
	for _, d := range stale {
		os.RemoveAll(d)
	}
}
