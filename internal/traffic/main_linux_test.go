package traffic

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/wire"
)

// TestMain doubles as an agent: the lab tests start this test binary in a
// lab node with T5_AGENT_LISTEN set (see startLabAgent), so the agent's sockets belong to the
// node, as they do when `interlink agent` runs there.
func TestMain(m *testing.M) {
	if addr := os.Getenv("T5_AGENT_LISTEN"); addr != "" {
		// The agent's defaults, as `interlink agent` has them, unless the
		// test caps its send rate (T5_AGENT_MAX_RATE, bit/s).
		rate, _ := strconv.ParseFloat(os.Getenv("T5_AGENT_MAX_RATE"), 64)
		srv, err := agent.NewServer(agent.Config{Token: testToken, Software: "t5 lab agent",
			Limits: wire.Limits{MaxRateBitsPerSec: rate}})
		if err == nil {
			err = srv.ListenAndServe(context.Background(), addr, func(net.Addr) { fmt.Println("ready") })
		}
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
