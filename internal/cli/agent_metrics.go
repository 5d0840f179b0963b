package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/metrics"
	"github.com/interlink/interlink/internal/rules"
)

// Bounds of agent --check-interval: an audit reads a few hundred small
// files, so more often than 10s is waste; 0 turns it off.
const (
	minAgentCheckInterval = 10 * time.Second
	maxAgentCheckInterval = 24 * time.Hour
)

// agentMetrics is agent --metrics: the listener is opened before the agent
// starts, so a bad address is one line and exit 3 before anything runs.
type agentMetrics struct {
	ln            net.Listener
	checkInterval time.Duration
}

// checkAgentMetrics validates --metrics and --check-interval and opens the
// listener (nil when --metrics is not given).
func checkAgentMetrics(addr string, checkInterval time.Duration, intervalSet bool) (*agentMetrics, error) {
	if checkInterval != 0 && (checkInterval < minAgentCheckInterval || checkInterval > maxAgentCheckInterval) {
		return nil, usageError("agent: --check-interval %s: want 0 (no audit) or %s to %s", checkInterval, minAgentCheckInterval, maxAgentCheckInterval)
	}
	if addr == "" {
		if intervalSet {
			return nil, usageError("agent: --check-interval needs --metrics ADDR (the findings are only exported as metrics)")
		}
		return nil, nil
	}
	ln, err := metrics.Listen(addr)
	if err != nil {
		return nil, usageError("agent: --metrics %v", err)
	}
	return &agentMetrics{ln: ln, checkInterval: checkInterval}, nil
}

// serve registers the node's metrics and serves them until ctx ends; the
// audit runs in the background from the start.
func (m *agentMetrics) serve(ctx context.Context, srv *agent.Server, log io.Writer) {
	reg := prometheus.NewRegistry()
	metrics.RegisterIP(reg, "/proc/net/snmp")
	metrics.RegisterAgent(reg, metrics.AgentStats{Active: srv.Active, Pending: srv.Pending, Sessions: srv.Sessions})
	if m.checkInterval > 0 {
		c := metrics.NewChecker(reg, metrics.LiveAudit("/", rules.Config{}), m.checkInterval, func(line string) {
			fmt.Fprintf(log, "%s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), line)
		})
		go c.Run(ctx)
	}
	go metrics.Serve(ctx, m.ln, reg)
}

// String is the line the agent prints once it listens.
func (m *agentMetrics) String() string {
	check := "no audit (--check-interval 0)"
	if m.checkInterval > 0 {
		check = "check every " + m.checkInterval.String()
	}
	return fmt.Sprintf("interlink agent metrics on http://%s/metrics (%s)", m.ln.Addr(), check)
}
