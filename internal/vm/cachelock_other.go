//go:build !linux

package vm

import "errors"

// lockCache: VM nodes run on Linux hosts only.
func lockCache() (func(), error) { return nil, errors.ErrUnsupported }
