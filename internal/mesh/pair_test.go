package mesh

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
	"github.com/interlink/interlink/internal/pmtu"
)

// A node that answered at contact and then lets one dial time out (either
// side descheduled for seconds on a node at full CPU) is dialled once more,
// not marked unreachable with every path of it not tried.
func TestRunDialTimeoutOnce(t *testing.T) {
	tok := []byte("mesh-test-token-0123456789")
	var nodes []Node
	for i := 1; i <= 4; i++ {
		addr := agenttest.StartOn(t, fmt.Sprintf("127.0.0.%d:0", i), agent.Config{Token: tok})
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i), Agent: addr})
	}
	var mu sync.Mutex
	dials := map[string]int{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials[addr]++
		n := dials[addr]
		mu.Unlock()
		if addr == nodes[0].Agent && n == 2 { // the first dial after the contact
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrDeadlineExceeded}
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	allOK(t, nodes, tok, dial)
	if dials[nodes[0].Agent] < 3 {
		t.Errorf("%d dials of n1's agent, want the contact, the one that timed out and more", dials[nodes[0].Agent])
	}
}

// A node whose host took the contact's connection but did not answer the
// handshake in time (its agent descheduled for seconds) is not marked
// unreachable at contact: its pairs dial it again and measure its paths.
func TestRunContactStalled(t *testing.T) {
	t.Parallel() // waits out one handshake timeout
	tok := []byte("mesh-test-token-0123456789")
	var nodes []Node
	for i := 1; i <= 3; i++ {
		addr := agenttest.StartOn(t, fmt.Sprintf("127.0.0.%d:0", i), agent.Config{Token: tok})
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i), Agent: addr})
	}
	// A listener that takes connections and never answers: the contact's
	// connection to n1 goes there.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	var mu sync.Mutex
	dials := map[string]int{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials[addr]++
		n := dials[addr]
		mu.Unlock()
		if addr == nodes[0].Agent && n == 1 {
			addr = silent.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	allOK(t, nodes, tok, dial)
}

// allOK runs a mesh of nodes through dial and fails t unless every node
// was reached and every path is ok at 9000.
func allOK(t *testing.T, nodes []Node, tok []byte, dial func(context.Context, string, string) (net.Conn, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, nodes, Options{Token: tok, Dial: dial, Probe: agent.ProbeOptions{Max: 9000, Expect: 9000}})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(nodes) * (len(nodes) - 1); len(res.Unreachable) > 0 || len(res.Paths) != want {
		t.Fatalf("unreachable %+v, %d paths, want %d", res.Unreachable, len(res.Paths), want)
	}
	for _, p := range res.Paths {
		if p.Problem() || p.Verdict != pmtu.OK {
			t.Errorf("path %s -> %s: %s %s", p.From, p.To, p.Verdict, p.Error)
		}
	}
}
