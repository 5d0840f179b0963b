//go:build !linux

package vm

import (
	"context"
	"errors"
	"io"
)

// Guest runs only in a Linux guest.
func Guest(ctx context.Context, configPath string, console io.Writer) error {
	return errors.ErrUnsupported
}
