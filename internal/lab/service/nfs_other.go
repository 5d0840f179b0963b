//go:build !linux

package service

import (
	"context"
	"errors"
	"net/netip"
)

// ErrMissing is returned when nfs-ganesha or rpcbind is not installed.
var ErrMissing = errors.New("nfs-ganesha not installed")

// NFSServer is nfs-ganesha in a lab node (Linux only).
type NFSServer struct{}

// StartNFS is Linux-only.
func StartNFS(context.Context, Node, netip.Addr, string) (*NFSServer, error) {
	return nil, errors.ErrUnsupported
}

// Stop does nothing.
func (s *NFSServer) Stop() error { return nil }
