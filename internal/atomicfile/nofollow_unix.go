//go:build unix

package atomicfile

import "syscall"

// noFollow refuses a link as the file opened (O_NOFOLLOW).
const noFollow = syscall.O_NOFOLLOW
