//go:build unix

package ab

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the command in a process group of its own and makes its
// cancellation end the whole group: SIGTERM first, SIGKILL after WaitDelay.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
