//go:build !linux

package demo

import "syscall"

// procAttr: labs exist only on Linux, where Run gets past its privilege
// check; elsewhere nothing is started.
func procAttr(bool) *syscall.SysProcAttr { return nil }
