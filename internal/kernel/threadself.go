package kernel

import (
	"errors"
	"os"
	"path/filepath"
)

// ThreadSelf reports whether the procfs at procRoot ("/proc" for the
// running kernel) has thread-self, the link to the calling thread's own
// task directory (Linux 3.17; RHEL and OL 7's 3.10 lack it). known is
// false when the answer could not be had (an error other than "does not
// exist"); callers that must choose treat that as absent and take the
// fallback, /proc/self/task/TID, which every kernel has. It is the one
// probe of thread-self: Probe reports it and counters picks its path by it.
// The root is a parameter so that a tree without thread-self stands in for
// an old kernel in tests.
func ThreadSelf(procRoot string) (present, known bool) {
	_, err := os.Lstat(filepath.Join(procRoot, "thread-self"))
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, os.ErrNotExist):
		return false, true
	}
	return false, false
}
