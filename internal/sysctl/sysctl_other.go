//go:build !linux

package sysctl

import (
	"errors"
	"fmt"
)

// Write is Linux's (/proc/sys); elsewhere it writes nothing.
func Write(kv map[string]string) error {
	return fmt.Errorf("sysctl: %w", errors.ErrUnsupported)
}
