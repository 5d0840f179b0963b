package vm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// User is the account qemu runs as: a system account of its own, made by
// the first Boot that needs it (useradd --system), that owns nothing but
// the directories of the VMs it runs.
var User = "interlink-qemu"

// account returns User's uid and gid, making the account when it is
// missing.
func account() (uid, gid uint32, err error) {
	u, err := user.Lookup(User)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return 0, 0, fmt.Errorf("user %s: %w", User, err)
		}
		out, aerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", "--comment", "interlink VM nodes (qemu)", User).CombinedOutput()
		// Another lab up may have made it meanwhile: look again.
		if u, err = user.Lookup(User); err != nil {
			return 0, 0, fmt.Errorf("qemu runs as user %s, which is missing: useradd: %v %s", User, aerr, strings.TrimSpace(string(out)))
		}
	}
	id, err1 := strconv.ParseUint(u.Uid, 10, 32)
	g, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || id == 0 {
		return 0, 0, fmt.Errorf("user %s: uid %s gid %s: want an unprivileged account", User, u.Uid, u.Gid)
	}
	return uint32(id), uint32(g), nil
}

// qemuCredential is what qemu runs as: User, with /dev/kvm's group when
// accel is kvm and /dev/kvm needs it.
func qemuCredential(accel string) (*syscall.Credential, error) {
	uid, gid, err := account()
	if err != nil {
		return nil, err
	}
	cred := &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}
	if accel == "kvm" {
		groups, err := kvmAccess()
		if err != nil {
			return nil, err
		}
		cred.Groups = groups
	}
	return cred, nil
}

// kvmAccess returns the supplementary groups qemu's user needs to open
// /dev/kvm (none when everyone may), or why it cannot: qemu does not run
// as root, and root's group is not handed out.
func kvmAccess() ([]uint32, error) {
	fi, err := os.Stat("/dev/kvm")
	if err != nil {
		return nil, err
	}
	perm := fi.Mode().Perm()
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case perm&0o006 == 0o006:
		return []uint32{}, nil
	case st != nil && perm&0o060 == 0o060 && st.Gid != 0:
		return []uint32{st.Gid}, nil
	}
	return nil, fmt.Errorf("/dev/kvm (mode %04o) is root's alone, and qemu does not run as root (chgrp kvm /dev/kvm; chmod 0660 /dev/kvm)", perm)
}

// giveDir makes s.Dir qemu's: the directory (where qemu makes its console
// file and sockets), the initramfs and a copy of the kernel owned by
// cred's user. qemu's user must be able to pass every directory above.
func giveDir(s *Spec, cred *syscall.Credential) error {
	if err := passable(filepath.Dir(s.Dir)); err != nil {
		return fmt.Errorf("qemu runs as user %s, which cannot reach %s: %w", User, s.Dir, err)
	}
	kernel := filepath.Join(s.Dir, kernelFile)
	if err := copyFile(s.Kernel.Image, kernel); err != nil {
		return err
	}
	for _, p := range []string{s.Dir, s.Initramfs, kernel} {
		if err := os.Lchown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	return nil
}

// passable reports, as an error, the first directory from / down to dir
// that others cannot pass (no execute bit for others).
func passable(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s has mode %04o (chmod o+x %s, or use a state directory others can pass)", p, fi.Mode().Perm(), p)
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// copyFile copies from to a new file to (0644), replacing what is there.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	os.Remove(to)
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// openTaps opens each NIC's tap (a persistent tap that exists here) as
// qemu would, with virtio's header and no packet information; the caller
// closes them once qemu has them.
func openTaps(nics []NIC) ([]*os.File, error) {
	var taps []*os.File
	for _, n := range nics {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll(taps)
			return nil, fmt.Errorf("tap %s: %w", n.Tap, err)
		}
		ifr, err := unix.NewIfreq(n.Tap)
		if err == nil {
			ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
			err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
		}
		if err != nil {
			unix.Close(fd)
			closeAll(taps)
			return nil, fmt.Errorf("tap %s: %w", n.Tap, err)
		}
		taps = append(taps, os.NewFile(uintptr(fd), "tap "+n.Tap))
	}
	return taps, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
