package ebpf

import "unsafe"

// ptr (ptr64_linux.go, ptr32_linux.go) is a pointer in union bpf_attr
// (an __aligned_u64). It holds an unsafe.Pointer, not a uintptr, so that
// the garbage collector keeps what it points to and updates it when a
// goroutine's stack moves.
func ptrTo[T any](p *T) ptr { return ptr{p: unsafe.Pointer(p)} }
