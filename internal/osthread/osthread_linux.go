// Package osthread runs work on OS threads that change for good (a network
// namespace entered with setns) and must never go back to the runtime.
package osthread

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Spent runs fn on a goroutine locked to an OS thread that is thrown away
// when fn returns (fn changes the thread's namespaces for good; a
// goroutine that exits locked takes its thread with it), and returns at
// once. Never the main thread: the runtime cannot end it and would keep it
// in fn's namespaces for the rest of the process, whose /proc/PID/ns/net
// would then name a lab node (and lab down would take the process for one
// of the lab's). On the main thread the goroutine holds it until another
// thread has taken the work.
func Spent(fn func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			fn() // never unlocked
			return
		}
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked
			close(locked)
			fn()
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
}
