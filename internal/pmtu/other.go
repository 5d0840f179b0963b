//go:build !linux

package pmtu

import (
	"context"
	"errors"
	"net"
	"net/netip"

	"github.com/interlink/interlink/internal/wire"
)

// Conn is only implemented on Linux (it needs IP_RECVERR and the error
// queue).
type Conn struct{}

// ListenUDP is only implemented on Linux.
func ListenUDP(laddr netip.AddrPort) (*net.UDPConn, error) { return nil, errors.ErrUnsupported }

// NewConn is only implemented on Linux.
func NewConn(c *net.UDPConn, seal *wire.Sealer, open *wire.Opener, peer netip.AddrPort, h Hooks) (*Conn, error) {
	return nil, errors.ErrUnsupported
}

func (k *Conn) Close() error                                       { return errors.ErrUnsupported }
func (k *Conn) LocalAddr() netip.AddrPort                          { return netip.AddrPort{} }
func (k *Conn) Peer() netip.AddrPort                               { return netip.AddrPort{} }
func (k *Conn) Hello() error                                       { return errors.ErrUnsupported }
func (k *Conn) Send(ctx context.Context, size int) (uint64, error) { return 0, errors.ErrUnsupported }
func (k *Conn) Events() <-chan Event                               { return nil }
func (k *Conn) HeaderBytes() int                                   { return 28 }
func (k *Conn) MinSize() int                                       { return 76 }
func (k *Conn) Local() (netip.Addr, string, int)                   { return netip.Addr{}, "", 0 }
func (k *Conn) Remote() netip.Addr                                 { return netip.Addr{} }
func (k *Conn) Method() string                                     { return "udp" }

// ICMPProber is only implemented on Linux.
type ICMPProber struct{ Conn }

// Unprivileged is only implemented on Linux.
func (p *ICMPProber) Unprivileged() bool { return false }

// NewICMPProber is only implemented on Linux.
func NewICMPProber(local, remote netip.Addr) (*ICMPProber, error) { return nil, errors.ErrUnsupported }

// ICMPOptions change how an ICMPProber sends.
type ICMPOptions struct{ DontRoute bool }

// NewICMPProberOpts is NewICMPProber with options.
func NewICMPProberOpts(local, remote netip.Addr, o ICMPOptions) (*ICMPProber, error) {
	return nil, errors.ErrUnsupported
}

// Iface is only implemented on Linux.
func Iface(addr netip.Addr) (string, int, error) { return "", 0, errors.ErrUnsupported }
