package pmqos

import (
	"context"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/agent/agenttest"
)

var testToken = []byte("t41-pmqos-test-token-0123456789abcdef")

func dial(t *testing.T, addr string) *agent.Client {
	t.Helper()
	c, err := agent.Dial(context.Background(), addr, testToken, agent.DialOptions{Software: "t41 pmqos test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAgentHold: an agent started with AllowCPULatency holds for the
// session and releases when it ends; one without refuses, with the flag
// to set, and the client learns it as a reason, not an error.
func TestAgentHold(t *testing.T) {
	needHoldable(t)
	c := dial(t, agenttest.Start(t, agent.Config{Token: testToken, AllowCPULatency: true}))
	e := PeerEnd(context.Background(), c, testUS)
	if !e.Held || e.AggregateUS == nil || *e.AggregateUS != testUS {
		t.Fatalf("allowed agent: %+v", e)
	}
	if v, _ := Current(); v != testUS {
		t.Errorf("aggregate during the session: %d", v)
	}
	// A second request replaces the first, it does not add to it.
	if e := PeerEnd(context.Background(), c, testUS+1); !e.Held || *e.AggregateUS != testUS+1 {
		t.Errorf("second request: %+v", e)
	}
	var rep Reply
	if err := c.Call(context.Background(), Kind, Request{US: -1}, &rep); err == nil {
		t.Error("a request of -1 us was taken")
	}
	c.Close()
	if v, ok := waitAggregate(t, func(v int32) bool { return v > testUS+1 }); !ok {
		t.Errorf("aggregate after the session ended: %d: not released", v)
	}

	c2 := dial(t, agenttest.Start(t, agent.Config{Token: testToken}))
	e = PeerEnd(context.Background(), c2, testUS)
	if e.Held || !strings.Contains(e.Reason, "--allow-cpu-latency") {
		t.Errorf("agent without the flag: %+v", e)
	}
	if v, _ := Current(); v <= testUS+1 {
		t.Errorf("the refusing agent holds: aggregate %d", v)
	}
}
