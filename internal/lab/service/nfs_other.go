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

// NFSOption changes how StartNFS runs the server.
type NFSOption int

// NFSDetached starts the server to outlive the calling process.
const NFSDetached NFSOption = 1

// NFSInstalled is Linux-only.
func NFSInstalled() error { return errors.ErrUnsupported }

// NFSExport is the directory a server started in dir exports.
func NFSExport(dir string) string { return dir + "/export" }

// NFSLog is ganesha's log of a server started in dir.
func NFSLog(dir string) string { return dir + "/ganesha.log" }

// StartNFS is Linux-only.
func StartNFS(context.Context, Node, netip.Addr, string, ...NFSOption) (*NFSServer, error) {
	return nil, errors.ErrUnsupported
}

// Stop does nothing.
func (s *NFSServer) Stop() error { return nil }
