//go:build unix

package agent

import "golang.org/x/sys/unix"

// msgTrunc is the message flag of a datagram read short (larger than the
// buffer it was read into).
const msgTrunc = unix.MSG_TRUNC
