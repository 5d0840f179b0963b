//go:build !linux

package gate

import "net"

// listenConfig: accepting through the net package sets a connection's
// options on each.
var listenConfig net.ListenConfig

// runLoop: the event loop is Linux's; elsewhere every route accepts with
// acceptLoop.
func (r *route) runLoop() bool { return false }
