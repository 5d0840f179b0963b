//go:build !linux

package cluster

import (
	"syscall"
	"time"
)

// userTimeout is nil where TCP_USER_TIMEOUT is not known: the keepalives
// and the stall watchdog still cut a dead connection, the kernel's own
// retransmission limit ends what they do not watch.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}

// readTCPState cannot read the kernel's TCP state here: the stall
// watchdog goes by the bytes that move through SSH alone.
func readTCPState(*link) (tcpState, bool) { return tcpState{}, false }
