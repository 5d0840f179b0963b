package counters

import (
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/interlink/interlink/internal/kernel"
)

// procFS is the procfs Take reads, with the once-probed answer to whether
// it has /proc/thread-self (Linux 3.17; RHEL and OL 7's 3.10 lack it).
// Tests give it another root (a tree where thread-self is absent) to go
// through the fallback.
type procFS struct {
	root   string
	gettid func() int

	once       sync.Once
	threadSelf bool
}

// live is the host's procfs.
var live = &procFS{root: "/proc", gettid: gettid}

// hasThreadSelf asks kernel's probe once; a kernel whose answer is not
// known takes the fallback, which every kernel has. Without thread-self
// Take reads /proc/self/task/TID/net, the same per-thread view.
func (p *procFS) hasThreadSelf() bool {
	p.once.Do(func() { p.threadSelf, _ = kernel.ThreadSelf(p.root) })
	return p.threadSelf
}

// threadNetDir is the net directory of the calling thread's network
// namespace. /proc/self/net would show the main thread's (the process's)
// namespace, which a goroutine switched into a lab node is not in; the
// task directory of the thread itself shows the thread's own, as
// thread-self does (a link to it). The caller stays on its thread between
// this call and the reads (take locks it).
func (p *procFS) threadNetDir() string {
	if p.hasThreadSelf() {
		return filepath.Join(p.root, "thread-self", "net")
	}
	return filepath.Join(p.root, "self", "task", strconv.Itoa(p.gettid()), "net")
}

func (p *procFS) take() (*Snapshot, error) {
	// Stay on this thread from naming its task directory to the last
	// read (a no-op count for a caller already locked in a namespace).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return TakeFrom(p.threadNetDir(), filepath.Join(p.root, "stat"))
}
