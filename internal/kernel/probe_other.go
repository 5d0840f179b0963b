//go:build !linux

package kernel

// probeKernel returns nil on systems other than Linux: there is no Linux
// kernel to ask.
func probeKernel() map[string]bool { return nil }
