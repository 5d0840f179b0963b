// Package runas holds what the database servers interlink starts (PostgreSQL
// in internal/pgserver, MariaDB in internal/mariadb) share about the account
// they run as and the port they listen on: the daemon's own account when
// interlink runs as root, the caller's otherwise; its uid and gid; a command
// made to run as it; a free TCP port.
package runas

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// Default returns daemon (e.g. "postgres", "mysql") when this process runs
// as root, else the current user's name: only root can switch accounts.
func Default(daemon string) (string, error) {
	if os.Geteuid() == 0 {
		return daemon, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// IDs returns the uid and gid of the account name.
func IDs(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// Account is the account a server runs as, with the words its errors use:
// the server's and the account's names, and for a missing account what to
// do about it.
type Account struct {
	Name   string // the account: "postgres", "mysql"
	Server string // what its errors start with: "pgserver", "mariadb"
	Hint   string // added to a lookup's error in parentheses (the install command); empty for none
}

// IDs returns the uid and gid of the account, or an error naming the
// server and the account.
func (a Account) IDs() (uid, gid int, err error) {
	uid, gid, err = IDs(a.Name)
	switch {
	case err != nil && a.Hint != "":
		return 0, 0, fmt.Errorf("%s: user %s: %w (%s)", a.Server, a.Name, err, a.Hint)
	case err != nil:
		return 0, 0, fmt.Errorf("%s: user %s: %w", a.Server, a.Name, err)
	}
	return uid, gid, nil
}

// Apply makes cmd run as the account (as the function Apply does with its
// ids).
func (a Account) Apply(cmd *exec.Cmd) error {
	uid, gid, err := a.IDs()
	if err != nil {
		return err
	}
	Apply(cmd, uid, gid)
	return nil
}

// Apply makes cmd run as uid and gid, without supplementary groups, when
// they are not this process's own (nothing to switch otherwise).
func Apply(cmd *exec.Cmd, uid, gid int) {
	if uid == os.Geteuid() {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

// FreePort returns a TCP port free on addr at the time of the call.
func FreePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("free port on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
