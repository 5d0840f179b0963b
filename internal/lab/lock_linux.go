package lab

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pauseEnv is a test hook: when set to N, Up stops after N creation steps
// (namespaces and links), says so on stderr and waits for its context to
// end, so a test can SIGKILL `lab up` at a known point.
const pauseEnv = "INTERLINK_LAB_TEST_PAUSE_AFTER"

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

// lock serialises Up and Down of one lab name across processes. The kernel
// drops the lock when the process dies, so a killed `lab up` never leaves
// the name locked. unlock(true) also removes the lock file (Down does, so no
// files stay behind); a process that locked a file just removed tries again
// with the new one.
func lock(name string) (unlock func(remove bool), err error) {
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lab %s: state dir: %w", name, err)
	}
	path := lockPath(name)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lab %s: lock: %w", name, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lab %s: lock: %w", name, err)
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
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
