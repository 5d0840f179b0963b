//go:build !linux

package db

import (
	"errors"
	"fmt"
	"net/netip"
)

// The local node's counters come from Linux's /proc; elsewhere the run
// reports the database's figures and says why the local ones are missing.
type localMeter struct{}

func startLocal() (*localMeter, error) {
	return nil, fmt.Errorf("local counters: %w", errors.ErrUnsupported)
}

func (m *localMeter) stop(*Local, int64) error { return errors.ErrUnsupported }

func routeInterface(netip.Addr) (string, error) { return "", errors.ErrUnsupported }
