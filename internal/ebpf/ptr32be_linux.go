//go:build mips

package ebpf

import "unsafe"

// On a big-endian 32-bit system the pointer is the u64's high half.
type ptr struct {
	_ uint32
	p unsafe.Pointer
}
