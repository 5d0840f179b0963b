package cache

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock takes the cache's lock (flock on Dir/.lock), so two labs coming up
// at once fetch a kernel once; the function it returns releases it.
func Lock() (func(), error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vm cache: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("vm cache: lock: %w", err)
	}
	return func() { f.Close() }, nil
}
