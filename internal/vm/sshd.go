package vm

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SSHD is OpenSSH's server (Debian's openssh-server) that a guest with
// GuestConfig.SSHD runs: it goes into the initramfs with the shared
// libraries it needs, found as the dynamic linker would on this host.
var SSHD = "/usr/sbin/sshd"

// libDirs are where sshd's libraries are looked for (Debian's multiarch
// directories first).
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// GuestSSHD is the sshd a guest runs on port 22: its host key (an OpenSSH
// private key file) and the authorized_keys lines for root.
type GuestSSHD struct {
	HostKey    string `json:"host_key"`
	Authorized string `json:"authorized"`
}

// guestLibDir is where the guest finds sshd's libraries.
const guestLibDir = "/lib/x86_64-linux-gnu"

// programClosure returns the files a dynamically linked program needs: the
// program, its interpreter and every library it needs, transitively, as
// host path -> guest path.
func programClosure(prog string) (map[string]string, error) {
	out := map[string]string{prog: prog}
	seen := map[string]bool{}
	queue := []string{prog}
	for len(queue) > 0 {
		f, err := elf.Open(queue[0])
		if err != nil {
			return nil, fmt.Errorf("vm: %s: %w (install openssh-server)", queue[0], err)
		}
		queue = queue[1:]
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				p.ReadAt(b, 0)
				interp := strings.TrimRight(string(b), "\x00")
				out[interp] = interp
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
				if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
					found = filepath.Join(d, lib)
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("vm: %s needs %s, not found in %s", prog, lib, strings.Join(libDirs, ", "))
			}
			out[found] = filepath.Join(guestLibDir, lib)
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

// writeSSHD adds sshd, its libraries, its configuration and the accounts
// it needs to the archive.
func (c *cpioWriter) writeSSHD(s *GuestSSHD) error {
	files, err := programClosure(SSHD)
	if err != nil {
		return err
	}
	for _, d := range []string{"lib64", "lib/x86_64-linux-gnu", "etc/ssh", "usr/lib", "usr/lib/x86_64-linux-gnu"} {
		c.entry(d, modeDir|0o755, nil)
	}
	for host, guest := range files {
		mode := 0o644
		if host == SSHD || strings.Contains(filepath.Base(host), "ld-linux") {
			mode = 0o755
		}
		if err := c.file(strings.TrimPrefix(guest, "/"), host, mode); err != nil {
			return err
		}
	}
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
