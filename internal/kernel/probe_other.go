//go:build !linux

package kernel

// Probe returns nil on systems other than Linux: there is no Linux kernel
// to ask.
func Probe() map[string]bool { return nil }
