package cli

import (
	"os/exec"
	"syscall"
)

// dieWithUs makes the command `lab exec` starts get SIGKILL when interlink
// dies, even by SIGKILL, so it is never orphaned. The signal fires when the
// OS thread that forked the child exits: lab.Node.Start forks from a thread
// it keeps locked until the child exits.
func dieWithUs(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
