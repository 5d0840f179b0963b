//go:build !linux

package lab

import "errors"

// Set needs Linux network namespaces.
func Set(name string, settings []Setting) (*Topology, error) { return nil, errors.ErrUnsupported }
