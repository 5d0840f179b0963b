//go:build !linux

package gate

// runLoop: the event loop is Linux's; elsewhere every route accepts with
// acceptLoop.
func (r *route) runLoop() bool { return false }
