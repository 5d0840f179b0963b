package vm

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// sshdPath is OpenSSH's server in a Debian tree.
const sshdPath = "/usr/sbin/sshd"

// libDirs are where sshd's libraries are looked for in the image (Debian's
// multiarch directories first).
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// GuestSSHD is the sshd a guest runs on port 22: its host key (an OpenSSH
// private key file) and the authorized_keys lines for root. Files is the
// directory DebianSSHD keeps sshd and what it needs in (host side only).
type GuestSSHD struct {
	HostKey    string `json:"host_key"`
	Authorized string `json:"authorized"`
	Files      string `json:"-"`
}

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

// sshdConfig is the guest's sshd_config: root by key only, no PAM (the
// guest has none), logs on stderr.
const sshdConfig = `Port 22
HostKey /etc/ssh/ssh_host_key
AuthorizedKeysFile /etc/ssh/authorized_keys
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
MaxStartups 64
`

// writeSSHD adds sshd and what it needs (s.Files, kept by DebianSSHD), its
// configuration and the accounts it needs to the archive.
func (c *cpioWriter) writeSSHD(s *GuestSSHD) error {
	err := filepath.WalkDir(s.Files, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.Files, p)
		switch {
		case rel == ".":
		case d.IsDir():
			c.entry(rel, modeDir|0o755, nil)
		default:
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return c.file(rel, p, int(fi.Mode().Perm()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("vm: sshd files %s: %w", s.Files, err)
	}
	c.entry("etc/ssh", modeDir|0o755, nil)
	c.entry("etc/ssh/sshd_config", modeFile|0o644, []byte(sshdConfig))
	c.entry("etc/ssh/ssh_host_key", modeFile|0o600, []byte(s.HostKey))
	c.entry("etc/ssh/authorized_keys", modeFile|0o644, []byte(s.Authorized))
	// sshd runs its unprivileged child as "sshd"; root's password is
	// unusable ("*"), not locked ("!"), so key logins work.
	c.entry("etc/passwd", modeFile|0o644, []byte("root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/bin/false\n"))
	c.entry("etc/group", modeFile|0o644, []byte("root:x:0:\nnogroup:x:65534:\n"))
	c.entry("etc/shadow", modeFile|0o600, []byte("root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n"))
	return nil
}
