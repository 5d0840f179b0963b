//go:build !linux

package pmqos

import (
	"errors"
	"fmt"
)

// Hold is a CPU-latency request held open; only Linux has them.
type Hold struct{ us int32 }

// Open fails with errors.ErrUnsupported: PM QoS is Linux's.
func Open(us int32) (*Hold, error) {
	return nil, fmt.Errorf("pmqos: %w", errors.ErrUnsupported)
}

// US is the value the hold requests.
func (h *Hold) US() int32 { return h.us }

// Close does nothing.
func (h *Hold) Close() error { return nil }

// Current fails with errors.ErrUnsupported.
func Current() (int32, error) { return 0, fmt.Errorf("pmqos: %w", errors.ErrUnsupported) }
