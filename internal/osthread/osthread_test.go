//go:build linux

package osthread

import (
	"testing"

	"golang.org/x/sys/unix"
)

// However often it is called, fn never runs on the main thread, even when
// the main goroutine is parked and the main thread free to run others.
func TestSpentNeverMainThread(t *testing.T) {
	tids := make(chan int, 200)
	for i := 0; i < 200; i++ {
		Spent(func() { tids <- unix.Gettid() })
	}
	for i := 0; i < 200; i++ {
		if tid := <-tids; tid == unix.Getpid() {
			t.Fatalf("call %d ran on the main thread", i)
		}
	}
}
