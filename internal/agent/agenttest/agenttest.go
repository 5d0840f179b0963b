// Package agenttest runs an interlink agent on loopback for the tests of
// packages that talk to one (the agent's own tests cannot import it).
package agenttest

import (
	"context"
	"net"
	"testing"

	"github.com/interlink/interlink/internal/agent"
)

// Start serves an agent with cfg on 127.0.0.1 (a free port) until the test
// ends, and returns its address. A Serve error fails the test.
func Start(t testing.TB, cfg agent.Config) string {
	t.Helper()
	return StartOn(t, "127.0.0.1:0", cfg)
}

// StartOn is Start on addr, a loopback address and port (port 0 for a free
// one): tests of several nodes give each its own 127.0.0.N.
func StartOn(t testing.TB, addr string, cfg agent.Config) string {
	t.Helper()
	srv, err := agent.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent serve: %v", err)
		}
	})
	return ln.Addr().String()
}
