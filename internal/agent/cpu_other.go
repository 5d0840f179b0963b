//go:build !linux

package agent

import (
	"errors"
	"fmt"
)

// CheckCPU reports whether this process may pin a thread to cpu; pinning
// is implemented on Linux only.
func CheckCPU(cpu int) error {
	return fmt.Errorf("cpu %d: pinning threads: %w", cpu, errors.ErrUnsupported)
}
