package agent

import (
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
	got := make(chan int, 4)
	c, u, log := udpEndpointSession(t, "test.udp.trunc", func(ep *UDPEndpoint) {
		buf := make([]byte, 1000)
		for {
			n, _, err := ep.Read(buf)
			if err != nil {
				return
			}
			got <- n
		}
	})
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
	case <-time.After(60 * time.Second): // only against a hang
		t.Fatal("the datagram that fits was never read")
	}
	c.Close()
	waitFor(t, func() bool { return strings.Contains(log.String(), "dropped 0, truncated 1") }, log)
}
