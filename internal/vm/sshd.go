package vm

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/interlink/interlink/internal/vm/guest"
)

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

// writeSSHD adds sshd and what it needs (s.Files, kept by cache.DebianSSHD), its
// configuration and the accounts it needs to the archive.
func (c *cpioWriter) writeSSHD(s *guest.SSHD) error {
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
