//go:build !unix

package ab

import "os/exec"

// ownGroup is a no-op where process groups do not exist; cancellation
// kills the command alone.
func ownGroup(cmd *exec.Cmd) {}
