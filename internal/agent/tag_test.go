package agent

import (
	"net"
	"testing"

	"github.com/interlink/interlink/internal/wire"
)

// TestTagNegotiated: a client of this build gets the cheaper data tag; an
// older client, which offers none, gets the HMAC tag every version-1 peer
// has (and an older agent, which never names one, leaves this client on
// it: Welcome.Tag empty is wire.TagHMAC).
func TestTagNegotiated(t *testing.T) {
	addr, _ := startAgent(t, wire.Limits{})
	c, err := dial(t, addr, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tag != wire.TagGMAC {
		t.Errorf("this build's client and agent agreed on tag %q, want %q", c.Tag, wire.TagGMAC)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cn, _ := wire.NewNonce()
	wire.Write(conn, &wire.Hello{Magic: wire.Magic, Version: wire.Version, Nonce: cn})
	m, err := wire.Read(conn)
	ch, ok := m.(*wire.Challenge)
	if !ok {
		t.Fatalf("challenge: %#v %v", m, err)
	}
	wire.Write(conn, &wire.Auth{Proof: wire.ClientProof(testToken, cn, ch.Nonce)})
	m, err = wire.Read(conn)
	if w, ok := m.(*wire.Welcome); !ok || w.Tag != wire.TagHMAC {
		t.Fatalf("an older client's welcome: %#v %v", m, err)
	}
}
