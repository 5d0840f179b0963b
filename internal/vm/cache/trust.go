package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/interlink/interlink/internal/shellq"
)

// ErrUntrusted marks a cache directory that whoever else can write to: root
// boots the kernels it holds and packs its files into initramfs images, so
// whoever can write it picks what the VMs run.
var ErrUntrusted = errors.New("untrusted cache")

// Trusted checks the cache directory dir (absolute) as ssh's StrictModes
// checks a user's files: every directory from / down to it, as given and
// with its links resolved, must be owned by root (or by the user running
// interlink, which is root where VMs run) and writable by neither its
// group nor others. A part of dir that does not exist yet is not checked
// (Dir makes it, root's). The error, wrapping ErrUntrusted, names the
// first directory at fault and how to fix it.
func Trusted(dir string) error {
	existing := dir
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return nil
		}
		existing = parent
	}
	// As given: who can replace a link is decided by the directory it
	// is in, checked one step before it.
	if err := trustedPath(dir, existing, os.Lstat); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("vm cache %s: %w", dir, err)
	}
	return trustedPath(dir, real, os.Stat)
}

// trustedPath checks p and each directory above it, read with stat.
func trustedPath(dir, p string, stat func(string) (fs.FileInfo, error)) error {
	for {
		fi, err := stat(p)
		if err != nil {
			return fmt.Errorf("vm cache %s: %w", dir, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if err := trustedEntry(dir, p, fi); err != nil {
				return err
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// trustedEntry checks one directory's owner and mode.
func trustedEntry(dir, p string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("vm cache %s: %s: no owner to check: %w", dir, p, ErrUntrusted)
	}
	elsewhere := "or set INTERLINK_VM_CACHE to a directory only root can write (the default is " + DefaultDir + ")"
	if uid := int(st.Uid); uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("vm cache %s: %s is owned by uid %d, not root: %w (chown root %s, %s)", dir, p, uid, ErrUntrusted, shellq.Quote(p), elsewhere)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		mode := uint32(perm)
		if fi.Mode()&fs.ModeSticky != 0 {
			// /tmp and its like: shared by design, not to be changed.
			mode |= 0o1000
			return fmt.Errorf("vm cache %s: %s is writable by others (mode %04o, shared): %w (set INTERLINK_VM_CACHE to a directory only root can write; the default is %s)", dir, p, mode, ErrUntrusted, DefaultDir)
		}
		return fmt.Errorf("vm cache %s: %s is writable by its group or others (mode %04o): %w (chmod go-w %s, %s)", dir, p, mode, ErrUntrusted, shellq.Quote(p), elsewhere)
	}
	return nil
}
