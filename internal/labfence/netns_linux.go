package labfence

import (
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/lab"
)

// sameNetns reports whether the calling thread's network namespace is the
// named one (lab.NetnsDir/ns): the same device and inode.
func sameNetns(ns string) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var self, other unix.Stat_t
	if unix.Stat("/proc/thread-self/ns/net", &self) != nil || unix.Stat(filepath.Join(lab.NetnsDir, ns), &other) != nil {
		return false
	}
	return self.Dev == other.Dev && self.Ino == other.Ino
}
