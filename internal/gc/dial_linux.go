package gc

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/agent"
)

// controlMSS caps the TCP segments of a run's control sessions (the
// coordinator's and the agents' pair sessions) in both directions: the
// IPv6 minimum MTU less its headers. A run exists to find paths that drop
// large frames without a word (a switch port left at 1500 on a jumbo
// interconnect, where Linux TCP, without tcp_mtu_probing, retransmits a
// full-size segment until it gives up); its control messages are a few KiB,
// and must still arrive over such a path so that what the run measured
// there is reported.
const controlMSS = 1220

// dial opens a control session's connection with controlMSS.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: agent.HandshakeTimeout, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, controlMSS) }); err != nil {
			return err
		}
		return serr
	}}
	return d.DialContext(ctx, network, addr)
}
