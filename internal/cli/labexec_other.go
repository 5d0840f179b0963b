//go:build !linux

package cli

import "os/exec"

// dieWithUs does nothing here: labs are Linux only.
func dieWithUs(c *exec.Cmd) {}
