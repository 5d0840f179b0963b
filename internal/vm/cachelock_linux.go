package vm

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockCache takes the cache's lock (flock on CacheDir/.lock), so two labs
// coming up at once fetch a kernel once.
func lockCache() (func(), error) {
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return nil, fmt.Errorf("vm cache: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(CacheDir(), ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vm cache: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("vm cache: lock: %w", err)
	}
	return func() { f.Close() }, nil
}
