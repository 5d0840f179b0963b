//go:build !linux

package counters

import "os"

// gettid has no thread ids to give here; there is no procfs to read
// either, so Take fails on its first open.
func gettid() int { return os.Getpid() }
