//go:build !linux

package gc

import (
	"context"
	"net"

	"github.com/interlink/interlink/internal/agent"
)

// dial opens a control session's connection (the Linux version also caps
// its segments, see there).
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: agent.HandshakeTimeout}
	return d.DialContext(ctx, network, addr)
}
