//go:build !linux

package inventory

import (
	"errors"
	"fmt"
	"io"
)

// parseMountinfo is Linux-only: moby/sys/mountinfo parses the format only
// in Linux builds. Solaris and HP-UX nodes are read from /etc/mnttab.
func parseMountinfo(r io.Reader, file string) ([]tableEntry, error) {
	return nil, fmt.Errorf("parse mountinfo: %w", errors.ErrUnsupported)
}
