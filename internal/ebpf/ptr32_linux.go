//go:build 386 || arm || mipsle

package ebpf

import "unsafe"

// On a little-endian 32-bit system the pointer is the u64's low half.
type ptr struct {
	p unsafe.Pointer
	_ uint32
}
