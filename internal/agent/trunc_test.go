package agent

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/wire"
)

// TestUDPEndpointTruncated: an authenticated datagram larger than the
// reader's buffer is read short; Read counts it as truncated and goes on,
// never returning it as received (nor counting it as garbage), and the
// session's log line says so.
func TestUDPEndpointTruncated(t *testing.T) {
	type opened struct {
		Port int `json:"port"`
	}
	got := make(chan int, 4)
	Register("test.udp.trunc", func(ctx context.Context, s *Session, _ json.RawMessage) (any, error) {
		ep, err := s.ListenUDP(netip.Addr{})
		if err != nil {
			return nil, err
		}
		go func() {
			buf := make([]byte, 1000)
			for {
				n, _, err := ep.Read(buf)
				if err != nil {
					return
				}
				got <- n
			}
		}()
		return opened{Port: int(ep.LocalAddr().Port())}, nil
	})
	addr, log := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	var o opened
	if err := c.Call(context.Background(), "test.udp.trunc", nil, &o); err != nil {
		t.Fatal(err)
	}
	u, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: o.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, size := range []int{3000, 800} {
		b := make([]byte, size)
		c.Sealer().SealPacket(b, wire.KindProbe, 0)
		u.Write(b)
	}
	select {
	case n := <-got:
		if n != 800 {
			t.Errorf("Read returned %d bytes, want the 800-byte datagram (the 3000-byte one is read short)", n)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the datagram that fits was not read")
	}
	c.Close()
	waitFor(t, func() bool { return strings.Contains(log.String(), "dropped 0, truncated 1") }, log)
}
