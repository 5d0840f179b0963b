//go:build !linux

package cache

import "errors"

// Lock: VM nodes run on Linux hosts only.
func Lock() (func(), error) { return nil, errors.ErrUnsupported }
