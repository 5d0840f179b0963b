//go:build !linux

package traffic

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/interlink/interlink/internal/agent"
)

// Place is where one end of a local run lives (see the Linux version).
type Place struct {
	Do   func(fn func() error) error
	Addr netip.Addr
}

func unsupported(role Role) *Side {
	return &Side{Role: role, Error: errors.ErrUnsupported.Error()}
}

// SendTCP is only implemented on Linux.
func SendTCP(context.Context, Spec, []*net.TCPConn, Options) *Side { return unsupported(RoleSender) }

// ReceiveTCP is only implemented on Linux.
func ReceiveTCP(context.Context, Spec, []*net.TCPConn, Options) *Side {
	return unsupported(RoleReceiver)
}

// SendUDP is only implemented on Linux.
func SendUDP(context.Context, Spec, *net.UDPConn, Options) *Side { return unsupported(RoleSender) }

// ReceiveUDP is only implemented on Linux.
func ReceiveUDP(context.Context, Spec, *net.UDPConn, Options) *Side {
	return unsupported(RoleReceiver)
}

// Request is only implemented on Linux.
func Request(context.Context, Spec, *net.UDPConn, Options) *Side { return unsupported(RoleRequester) }

// Respond is only implemented on Linux.
func Respond(context.Context, Spec, *net.UDPConn, Options) *Side { return unsupported(RoleResponder) }

// RunLocal is only implemented on Linux.
func RunLocal(context.Context, Spec, Place, Place, func(Direction, Role, Interval)) (*Result, error) {
	return nil, errors.ErrUnsupported
}

// RunRemote is only implemented on Linux.
func RunRemote(context.Context, *agent.Client, Spec, func(Direction, Role, Interval)) (*Result, error) {
	return nil, errors.ErrUnsupported
}

// LinkRate is only implemented on Linux.
func LinkRate(netip.Addr) int64 { return 0 }

// CheckCPU is only implemented on Linux.
func CheckCPU(int) error { return errors.ErrUnsupported }
