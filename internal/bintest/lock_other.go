//go:build !linux

package bintest

// lockDir is a no-op off Linux (tests run on Linux): concurrent builds then only
// cost time, as the rename into the entry is atomic.
func lockDir(string) (unlock func(), err error) { return func() {}, nil }
