//go:build linux

package pmtu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/wire"
)

// Conn is one UDP probe socket of a session. It answers tagged probes
// from its peer with a 48-byte tagged ack (never more than it received),
// and it sends its own tagged probes to the peer (Prober). The client's
// peer is fixed (the agent's endpoint); the agent's peer is learned from
// the first authenticated datagram, so the agent only ever sends to an
// address that proved it holds the session key.
type Conn struct {
	c     *net.UDPConn
	seal  *wire.Sealer
	open  *wire.Opener
	hooks Hooks

	mu    sync.Mutex
	peer  netip.AddrPort
	fixed bool

	events chan Event
	done   chan struct{}
	local  netip.Addr
	iface  string
	mtu    int
	v6     bool
}

// NewConn wraps c (from ListenUDP). seal tags what this side sends, open
// verifies what it receives. peer may be the zero AddrPort (learn it). It
// looks up the local interface MTU, so call it in the socket's namespace.
// The Conn owns c: Close closes it.
func NewConn(c *net.UDPConn, seal *wire.Sealer, open *wire.Opener, peer netip.AddrPort, h Hooks) (*Conn, error) {
	la := c.LocalAddr().(*net.UDPAddr).AddrPort()
	local := la.Addr().Unmap()
	if !local.IsValid() || local.IsUnspecified() {
		return nil, fmt.Errorf("udp probe socket: bind to a specific address, not %s", la)
	}
	iface, mtu, err := Iface(local)
	if err != nil {
		return nil, fmt.Errorf("udp probe socket on %s: %w", la, err)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	k := &Conn{c: c, seal: seal, open: open, hooks: h, events: make(chan Event, 256), done: make(chan struct{}),
		local: local, iface: iface, mtu: mtu, v6: local.Is6()}
	if peer.IsValid() {
		k.peer, k.fixed = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port()), true
	}
	go func() {
		defer close(k.done)
		readLoop(rc, readBuffer, k.onData, h.Short, k.onQueue)
	}()
	return k, nil
}

// Close closes the socket and waits for its reader.
func (k *Conn) Close() error {
	err := k.c.Close()
	<-k.done
	return err
}

// LocalAddr is the socket's address.
func (k *Conn) LocalAddr() netip.AddrPort {
	ap := k.c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// Peer is the fixed or learned peer (invalid until learned).
func (k *Conn) Peer() netip.AddrPort {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.peer
}

// Hello sends a tagged header-only datagram so that the agent's endpoint
// learns this socket's address before it probes back.
func (k *Conn) Hello() error {
	b := make([]byte, wire.HeaderLen)
	if _, err := k.seal.SealPacket(b, wire.KindHello, 0); err != nil {
		return err
	}
	return k.write(b)
}

// write sends b to the peer. Every datagram on the socket (hellos, probes,
// acks) goes through sendProbe, so a pending ICMP error from an earlier
// probe neither fakes a local limit nor silently eats an ack.
func (k *Conn) write(b []byte) error {
	peer := k.Peer()
	if !peer.IsValid() {
		return errors.New("udp probe socket: no authenticated peer yet (the client sends first)")
	}
	err := sendProbe(func() error {
		_, err := k.c.WriteToUDPAddrPort(b, peer)
		return err
	})
	if err == nil && k.hooks.Out != nil {
		k.hooks.Out(len(b))
	}
	return err
}

func (k *Conn) onData(b []byte, sa unix.Sockaddr) {
	from := sockaddrAddrPort(sa)
	h, err := k.open.Open(b)
	if err == nil {
		k.mu.Lock()
		switch {
		case !k.peer.IsValid():
			k.peer = from
		case k.peer != from:
			err = fmt.Errorf("from %s, not the session peer", from)
		}
		k.mu.Unlock()
	}
	if err != nil {
		if k.hooks.Drop != nil {
			k.hooks.Drop()
		}
		return
	}
	if k.hooks.In != nil {
		k.hooks.In(len(b))
	}
	switch h.Kind {
	case wire.KindProbe:
		// The ack is a bare header: never larger than the probe, which is
		// at least a header (Open checked the length).
		ack := make([]byte, wire.HeaderLen)
		if k.hooks.Allow != nil && !k.hooks.Allow(len(ack)) {
			return
		}
		if _, err := k.seal.SealPacket(ack, wire.KindAck, h.Seq); err == nil {
			k.write(ack)
		}
	case wire.KindAck:
		select {
		case k.events <- Event{Kind: EvAck, ID: h.Ref}:
		default:
		}
	}
}

func (k *Conn) onQueue(b, oob []byte) {
	ev, ok := queueEvent(oob)
	if !ok {
		return
	}
	if h, err := wire.ParseHeader(b); err == nil && h.Kind == wire.KindProbe {
		ev.ID = h.Seq
	}
	select {
	case k.events <- ev:
	default:
	}
}

// Send sends one tagged probe of size bytes (IP packet) to the peer.
func (k *Conn) Send(ctx context.Context, size int) (uint64, error) {
	n := size - k.HeaderBytes()
	if n < wire.HeaderLen {
		return 0, fmt.Errorf("probe of %d bytes: below the smallest (%d)", size, k.MinSize())
	}
	if k.hooks.Wait != nil {
		if err := k.hooks.Wait(ctx, n); err != nil {
			return 0, err
		}
	}
	b := make([]byte, n)
	seq, err := k.seal.SealPacket(b, wire.KindProbe, 0)
	if err != nil {
		return 0, err
	}
	if err := k.write(b); err != nil {
		if isMsgSize(err) {
			return seq, ErrLocalTooBig
		}
		return seq, fmt.Errorf("send probe of %d bytes: %w", size, err)
	}
	return seq, nil
}

// Events delivers acks and ICMP errors.
func (k *Conn) Events() <-chan Event { return k.events }

// HeaderBytes is IP + UDP header bytes.
func (k *Conn) HeaderBytes() int {
	if k.v6 {
		return 48
	}
	return 28
}

// MinSize is the smallest probe: headers plus the interlink data header.
func (k *Conn) MinSize() int { return k.HeaderBytes() + wire.HeaderLen }

// Local describes the sending side.
func (k *Conn) Local() (netip.Addr, string, int) { return k.local, k.iface, k.mtu }

// Remote is the peer's address.
func (k *Conn) Remote() netip.Addr { return k.Peer().Addr() }

// Method is "udp".
func (k *Conn) Method() string { return "udp" }
