package demo

import "syscall"

// procAttr makes a process started in a node end with the demo (SIGTERM
// when the starting thread dies) unless it must outlive it (a kept agent),
// and puts it in a process group of its own, so Ctrl-C on the terminal
// reaches the demo, which stops what it started in order.
func procAttr(endWithUs bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if endWithUs {
		a.Pdeathsig = syscall.SIGTERM
	}
	return a
}
