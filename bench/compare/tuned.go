//go:build linux

package main

import (
	"fmt"

	"github.com/interlink/interlink/internal/pmqos"
	"github.com/interlink/interlink/internal/traffic"
)

// The host tuned: a PM QoS CPU latency request of 0 held for the whole
// scenario by this process (both lab nodes share its kernel, so it holds
// for both ends of every tool), and interlink asks for the same through
// its own flag (`bench --cpu-latency 0` against an agent started with
// --allow-cpu-latency: a run that did not hold on both ends is an error).
// With the hosts kept awake, the round trip is the tools and the path;
// without it, it is mostly two vCPUs waking up (a KVM guest whose
// haltpoll governor halts at once for any request but 0).

// holdForScenario takes the scenario's hold and says so; the returned
// function releases it (and so does this process's end, however it ends).
func holdForScenario(us int32) (func(), error) {
	h, err := pmqos.Open(us)
	if err != nil {
		return nil, fmt.Errorf("hold the CPU latency request: %w", err)
	}
	agg, _ := pmqos.Current()
	fmt.Printf("  (PM QoS CPU latency request of %d us held by compare for the next scenario, aggregate %d us; released after it)\n", us, agg)
	return func() { h.Close() }, nil
}

func tunedScenarios() []scenario {
	zero := int32(0)
	return []scenario{
		{name: "8 KiB round trip, MTU 9000, PM QoS 0 held", lab: "t5-bench9000", unit: "median RTT", goal: "<= 1.0", peerName: "sockperf pp",
			holdUS: &zero,
			peer:   func(p *pair) (sample, error) { v, err := sockperfRTT(p, 8192, "max"); return sample{v: v}, err },
			agent: func(p *pair) (sample, error) {
				f, err := benchVia(p, p.tuned, "--mode", "blocks", "--request", "8K", "--block", "8K", "--outstanding", "1", "--cpu-latency", "0")
				return rttOf(f.Summary, err)
			},
			direct: func(p *pair) (sample, error) {
				return rttOf(ours(p, traffic.Spec{Mode: traffic.ModeBlocks, Request: 8192, Block: 8192}))
			},
			ratio: div, met: atMost(1.0)},
	}
}
