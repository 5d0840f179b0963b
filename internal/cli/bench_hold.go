package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/pmqos"
)

// cpuLatencyHelp is --cpu-latency's help line.
const cpuLatencyHelp = "hold a PM QoS CPU latency request of US microseconds on both ends for the run only (/dev/cpu_dma_latency, as cyclictest does; " +
	"the agent must run with --allow-cpu-latency); 0 keeps idle CPUs from sleeping, and only 0 stops a KVM guest's haltpoll governor from halting"

// parseCPULatency parses --cpu-latency when it was given: nil when not.
func parseCPULatency(changed bool, v string) (*int32, error) {
	if !changed {
		return nil, nil
	}
	us, err := pmqos.ParseUS(v)
	if err != nil {
		return nil, usageError("bench: --cpu-latency %s", strings.TrimSuffix(err.Error(), ": "+pmqos.ErrBadValue.Error()))
	}
	return &us, nil
}

// cpuHold is the holds of one run: this host's and the agents'.
type cpuHold struct {
	local *pmqos.Hold
	owned []*agent.Client // sessions opened only to hold (gc)
	rep   *pmqos.Report
}

// holdCPULatency takes us on this host and on each agent, through the
// sessions given; an end that cannot hold is reported, and the run goes on.
func holdCPULatency(ctx context.Context, us int32, clients []*agent.Client) *cpuHold {
	h := &cpuHold{rep: &pmqos.Report{RequestedUS: us}}
	var local pmqos.End
	h.local, local = pmqos.LocalEnd(us)
	h.rep.Ends = append(h.rep.Ends, local)
	for _, c := range clients {
		h.rep.Ends = append(h.rep.Ends, pmqos.PeerEnd(ctx, c, us))
	}
	return h
}

// holdOnAgents dials each agent for a session of its own that holds us
// (the measurement's sessions belong to another package): an agent that
// cannot be reached is reported as not holding.
func holdOnAgents(ctx context.Context, us int32, agents []string, tok []byte) *cpuHold {
	h := holdCPULatency(ctx, us, nil)
	for _, a := range agents {
		c, err := agent.Dial(ctx, a, tok, agent.DialOptions{Software: "interlink " + buildVersion().Version})
		if err != nil {
			h.rep.Ends = append(h.rep.Ends, pmqos.End{End: "peer " + a, Reason: err.Error()})
			continue
		}
		h.owned = append(h.owned, c)
		h.rep.Ends = append(h.rep.Ends, pmqos.PeerEnd(ctx, c, us))
	}
	return h
}

// release ends the local hold and the sessions opened to hold; a hold on
// a measurement's session ends with that session. nil does nothing.
func (h *cpuHold) release() {
	if h == nil {
		return
	}
	if h.local != nil {
		h.local.Close()
	}
	for _, c := range h.owned {
		c.Close()
	}
	h.owned = nil
}

// report is the holds' report, nil without holds.
func (h *cpuHold) report() *pmqos.Report {
	if h == nil {
		return nil
	}
	return h.rep
}

// writeText prints the holds' lines (nothing without holds).
func (h *cpuHold) writeText(e *env) {
	if h == nil {
		return
	}
	for _, l := range h.rep.Lines() {
		fmt.Fprintln(e.stdout, l)
	}
}
