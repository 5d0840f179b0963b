package lab

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/interlink/interlink/internal/osthread"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// prepareNetnsDir makes /run/netns a shared mount point, as ip-netns(8)
// does, so that unmounting a namespace here also unmounts it in mount
// namespaces created later (a node's processes), and the namespace dies.
func prepareNetnsDir() error {
	if err := os.MkdirAll(NetnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", NetnsDir, err)
	}
	made := false
	for {
		err := unix.Mount("", NetnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		if err != unix.EINVAL || made {
			return fmt.Errorf("make %s a shared mount: %w", NetnsDir, err)
		}
		if err := unix.Mount(NetnsDir, NetnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s: %w", NetnsDir, err)
		}
		made = true
	}
}

// createNS creates a named network namespace without moving any thread of
// this process into it for good: a fresh locked thread unshares, the
// namespace is bind-mounted to /run/netns/NAME, and the thread is discarded
// (a goroutine that exits while locked takes its thread with it).
func createNS(name string) (netns.NsHandle, error) {
	path := nsPath(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return -1, err
	}
	f.Close()
	errc := make(chan error, 1)
	osthread.Spent(func() {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		// /proc/self/task/TID rather than /proc/thread-self, which
		// kernels before 3.17 (RHEL and Oracle Linux 7) do not have.
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("bind-mount %s: %w", path, err)
			return
		}
		errc <- nil
	})
	if err := <-errc; err != nil {
		os.Remove(path)
		return -1, err
	}
	return netns.GetFromPath(path)
}

// removeNS unmounts and removes a named namespace. The namespace itself, with
// every veth and bridge in it, goes when its last user is gone.
func removeNS(name string) error {
	path := nsPath(name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// inNS runs fn on a locked OS thread inside the namespace h and switches
// the thread back afterwards.
func inNS(h netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(h); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace: %w", err)
	}
	defer func() {
		// If the thread cannot go back it stays locked, and the runtime
		// discards it when the goroutine ends rather than reuse it.
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return fn()
}

// enterNode moves the calling (locked) thread into the node's network
// namespace and into a private mount namespace with the node's sysfs.
func enterNode(h netns.NsHandle) error {
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("enter namespace: %w", err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	// Slave, not private: unmounts on the host (a lab going down) still
	// reach this mount namespace, while nothing here reaches the host.
	if err := unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("unmount /sys: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount sysfs: %w", err)
	}
	return nil
}

// pidfdOpen is unix.PidfdOpen; tests replace it to act as a kernel before
// 5.3, which has no pidfd_open (ENOSYS).
var pidfdOpen = unix.PidfdOpen

// waitExit blocks until process pid, a child of this process, exits,
// without reaping it (the caller's cmd.Wait does that). It polls a pidfd
// where the kernel has pidfd_open (5.3); elsewhere (ENOSYS, or a seccomp
// filter refusing it) it waits with waitid and WNOWAIT, which also leaves
// the child for its owner to reap. Only "no such process" means the child
// is already gone.
func waitExit(pid int) {
	fd, err := pidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err != nil {
		waitExitNoPidfd(pid)
		return
	}
	defer unix.Close(fd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
		if err != syscall.EINTR {
			return
		}
	}
}

// waitExitNoPidfd waits for the child pid to exit and leaves it unreaped;
// it returns at once when pid is no child of this process any more
// (ECHILD: already reaped).
func waitExitNoPidfd(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
