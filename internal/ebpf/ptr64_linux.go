//go:build amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le

package ebpf

import "unsafe"

type ptr struct{ p unsafe.Pointer }
