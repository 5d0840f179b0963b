//go:build !linux

package guest

import (
	"context"
	"io"
)

// Run runs only in a Linux guest: elsewhere it is not one (ErrNotGuest),
// and changes nothing.
func Run(ctx context.Context, configPath string, console io.Writer) error {
	return ErrNotGuest
}
