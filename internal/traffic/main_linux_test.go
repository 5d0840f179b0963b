package traffic

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/wire"
)

// TestMain doubles as an agent: the lab tests start this test binary in a
// lab node with T5_AGENT_LISTEN set, so the agent's sockets belong to the
// node, as they do when `interlink agent` runs there.
func TestMain(m *testing.M) {
	if addr := os.Getenv("T5_AGENT_LISTEN"); addr != "" {
		srv, err := agent.NewServer(agent.Config{Token: testToken, Software: "t5 lab agent",
			Limits: wire.Limits{MaxRateBitsPerSec: 10e9}})
		if err == nil {
			err = srv.ListenAndServe(context.Background(), addr, func(net.Addr) { fmt.Println("ready") })
		}
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
