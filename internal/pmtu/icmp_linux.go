//go:build linux

package pmtu

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// ICMPProber probes with ICMP echo requests carrying DF, for hosts without
// an agent. It uses an unprivileged ping socket where
// net.ipv4.ping_group_range allows, else a raw socket (root). The echo
// reply has the size of the request, so a size passes only if it crosses
// the path both ways; without an agent the reverse direction cannot be
// told apart.
type ICMPProber struct {
	f      *os.File
	rc     syscall.RawConn
	raw    bool
	v6     bool
	id     int
	cookie [8]byte

	mu  sync.Mutex
	seq uint16

	events chan Event
	done   chan struct{}
	local  netip.Addr
	remote netip.Addr
	iface  string
	mtu    int
}

// NewICMPProber opens an echo socket to remote, from local when valid. Call
// it in the namespace whose path is to be probed.
func NewICMPProber(local, remote netip.Addr) (*ICMPProber, error) {
	return NewICMPProberOpts(local, remote, ICMPOptions{})
}

// ICMPOptions change how an ICMPProber sends.
type ICMPOptions struct {
	// DontRoute sends as Oracle Direct NFS does with dontroute: out of the
	// interface that holds the local address (SO_BINDTODEVICE, root), to
	// a directly connected destination only (SO_DONTROUTE), whatever the
	// routing table would choose.
	DontRoute bool
}

// NewICMPProberOpts is NewICMPProber with options.
func NewICMPProberOpts(local, remote netip.Addr, o ICMPOptions) (*ICMPProber, error) {
	remote = remote.Unmap()
	v6 := remote.Is6()
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if v6 {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	raw := false
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		var rerr error
		fd, rerr = unix.Socket(family, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
		if rerr != nil {
			return nil, fmt.Errorf("icmp socket: ping sockets not allowed (%v; see net.ipv4.ping_group_range) and raw sockets need root (%v)", err, rerr)
		}
		raw = true
	}
	p := &ICMPProber{raw: raw, v6: v6, remote: remote, events: make(chan Event, 256), done: make(chan struct{})}
	fail := func(what string, err error) (*ICMPProber, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("icmp socket to %s: %s: %w", remote, what, err)
	}
	if err := setProbeOptions(fd, v6); err != nil {
		return fail("options", err)
	}
	if local.IsValid() {
		if err := unix.Bind(fd, sockaddr(local, 0)); err != nil {
			return fail("bind "+local.String(), err)
		}
	}
	if o.DontRoute {
		if !local.IsValid() {
			return fail("dontroute", errors.New("needs a local address"))
		}
		ifname, _, err := Iface(local)
		if err != nil {
			return fail("dontroute: interface of "+local.String(), err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DONTROUTE, 1); err != nil {
			return fail("SO_DONTROUTE", err)
		}
		if err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, ifname); err != nil {
			return fail("SO_BINDTODEVICE "+ifname+" (needs root)", err)
		}
	}
	if err := unix.Connect(fd, sockaddr(remote, 0)); err != nil {
		return fail("connect", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	lap := sockaddrAddrPort(sa)
	p.local = lap.Addr()
	if p.iface, p.mtu, err = Iface(p.local); err != nil {
		return fail("local interface", err)
	}
	p.id = int(lap.Port()) // a ping socket's echo id is its "port"
	if raw {
		var b [2]byte
		rand.Read(b[:])
		p.id = int(binary.BigEndian.Uint16(b[:]))
	}
	rand.Read(p.cookie[:])
	p.f = os.NewFile(uintptr(fd), "icmp")
	if p.rc, err = p.f.SyscallConn(); err != nil {
		p.f.Close()
		return nil, err
	}
	go func() {
		defer close(p.done)
		readLoop(p.rc, readBuffer, p.onData, nil, p.onQueue)
	}()
	return p, nil
}

func sockaddr(a netip.Addr, port int) unix.Sockaddr {
	if a.Is4() || a.Is4In6() {
		return &unix.SockaddrInet4{Addr: a.Unmap().As4(), Port: port}
	}
	sa := &unix.SockaddrInet6{Addr: a.As16(), Port: port}
	if z := a.Zone(); z != "" {
		// A link-local address needs its interface (fe80::1%eth1).
		if ifc, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifc.Index)
		}
	}
	return sa
}

// Unprivileged reports whether the prober uses a ping socket (no root
// needed) rather than a raw socket.
func (p *ICMPProber) Unprivileged() bool { return !p.raw }

// Close closes the socket.
func (p *ICMPProber) Close() error {
	err := p.f.Close()
	<-p.done
	return err
}

func (p *ICMPProber) proto() int {
	if p.v6 {
		return 58
	}
	return 1
}

func (p *ICMPProber) onData(b []byte, _ unix.Sockaddr) {
	if p.raw && !p.v6 {
		// A raw IPv4 socket sees the IP header.
		if len(b) < 20 {
			return
		}
		b = b[int(b[0]&0x0f)*4:]
	}
	m, err := icmp.ParseMessage(p.proto(), b)
	if err != nil {
		return
	}
	if m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply {
		return
	}
	e, ok := m.Body.(*icmp.Echo)
	if !ok || !bytes.HasPrefix(e.Data, p.cookie[:]) || (p.raw && e.ID != p.id) {
		return
	}
	select {
	case p.events <- Event{Kind: EvAck, ID: uint64(e.Seq)}:
	default:
	}
}

func (p *ICMPProber) onQueue(b, oob []byte) {
	ev, ok := queueEvent(oob)
	if !ok {
		return
	}
	// The error quotes our echo request: type, code, checksum, id, seq.
	if len(b) >= 8 {
		ev.ID = uint64(binary.BigEndian.Uint16(b[6:8]))
	}
	select {
	case p.events <- ev:
	default:
	}
}

// Send sends one echo request of size bytes (IP packet).
func (p *ICMPProber) Send(ctx context.Context, size int) (uint64, error) {
	n := size - p.HeaderBytes()
	if n < len(p.cookie) {
		return 0, fmt.Errorf("echo of %d bytes: below the smallest (%d)", size, p.MinSize())
	}
	p.mu.Lock()
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	data := make([]byte, n)
	copy(data, p.cookie[:])
	var typ icmp.Type = ipv4.ICMPTypeEcho
	if p.v6 {
		typ = ipv6.ICMPTypeEchoRequest
	}
	// ICMPv6 checksums are filled in by the kernel (raw and ping sockets).
	b, err := (&icmp.Message{Type: typ, Body: &icmp.Echo{ID: p.id, Seq: int(seq), Data: data}}).Marshal(nil)
	if err != nil {
		return 0, err
	}
	err = sendProbe(func() error {
		var serr error
		if err := p.rc.Write(func(fd uintptr) bool {
			_, serr = unix.Write(int(fd), b)
			return serr != unix.EAGAIN
		}); err != nil {
			return err
		}
		return serr
	})
	if err != nil {
		if errors.Is(err, unix.EMSGSIZE) {
			return uint64(seq), ErrLocalTooBig
		}
		return uint64(seq), fmt.Errorf("send echo of %d bytes: %w", size, err)
	}
	return uint64(seq), nil
}

// Events delivers echo replies and ICMP errors.
func (p *ICMPProber) Events() <-chan Event { return p.events }

// HeaderBytes is IP + ICMP header bytes.
func (p *ICMPProber) HeaderBytes() int {
	if p.v6 {
		return 48
	}
	return 28
}

// MinSize is the smallest echo: headers and the 8-byte cookie.
func (p *ICMPProber) MinSize() int { return p.HeaderBytes() + len(p.cookie) }

// Local describes the sending side.
func (p *ICMPProber) Local() (netip.Addr, string, int) { return p.local, p.iface, p.mtu }

// Remote is the probed address.
func (p *ICMPProber) Remote() netip.Addr { return p.remote }

// Method is "icmp".
func (p *ICMPProber) Method() string { return "icmp" }
