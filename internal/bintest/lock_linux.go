package bintest

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on the file at path (made if missing)
// and returns the function that releases it. The kernel releases it too
// when the process dies, so a killed test leaves no stale lock.
func lockDir(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
