package lab

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// CheckPrivilege returns ErrPrivilege unless this process has CAP_NET_ADMIN
// and CAP_SYS_ADMIN (namespaces and mounts need the latter).
func CheckPrivilege() error {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return fmt.Errorf("lab: %w (cannot read capabilities: %v)", ErrPrivilege, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				break
			}
			need := uint64(1)<<unix.CAP_NET_ADMIN | uint64(1)<<unix.CAP_SYS_ADMIN
			if caps&need != need {
				return fmt.Errorf("lab: %w", ErrPrivilege)
			}
			return nil
		}
	}
	return fmt.Errorf("lab: %w (no CapEff in /proc/self/status)", ErrPrivilege)
}

// lock gives this process the lab called name for op (opUp or opDown), or
// returns a *BusyError naming the process that has it: one lab is built or
// removed by one process at a time, and a second one waits for nothing and
// changes nothing. The lock is flock(2) on NAME.lock, so the kernel drops it
// when its process dies and a killed `lab up` never leaves the name locked.
// The holder writes "PID OP" into the file, for the others' message.
// unlock(true) also removes the lock file (Down does, so no files stay
// behind); a process that locked a file just removed tries again with the
// new one.
func lock(name, op string) (unlock func(remove bool), err error) {
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lab %s: state dir: %w", name, err)
	}
	path := lockPath(name)
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lab %s: lock: %w", name, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if !errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("lab %s: lock: %w", name, err)
			}
			pid, hop := lockHolder(path)
			// A holder that let go (or a lock file replaced) between the
			// two looks, or one that has not yet written what for: look
			// again, briefly.
			if (pid == 0 || hop == "") && tries < 50 {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return nil, &BusyError{Lab: name, PID: pid, Op: hop}
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), op)), 0)
			}
			return func(remove bool) {
				if remove {
					os.Remove(path)
				}
				f.Close()
			}, nil
		}
		f.Close()
	}
}

// lockHolder returns the process that holds the lock file at path (0 when
// none does) and, when it wrote it, what for.
func lockHolder(path string) (pid int, op string) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, ""
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, ""
	}
	pid = flockHolder(locks, unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	if pid == 0 {
		return 0, ""
	}
	content, _ := os.ReadFile(path)
	return pid, lockOwner(content, pid)
}
