//go:build linux

package main

import (
	"fmt"

	"github.com/interlink/interlink/internal/traffic"
)

// splitScenarios measure what splitting each round trip into its parts
// (kernel receive stamps at both ends, the responder's hold in each block)
// costs: 8 KiB blocks through the agent with the split (the default)
// against --split=false, one block in flight as users run it. The goal:
// at most 3 % of blocks/s.
func splitScenarios() []scenario {
	blocksOf := func(s traffic.Summary, err error) (sample, error) {
		if err == nil && s.Messages == 0 {
			err = fmt.Errorf("blocks: none came back")
		}
		return sample{v: s.PerSec, loss: s.LossPercent, note: fmt.Sprintf("(cpu per block: requester %.1f us, agent %.1f us)", s.ClientCost.CPUNsPerMsg/1e3, s.ServerCost.CPUNsPerMsg/1e3)}, err
	}
	split := func(name string, hold *int32) scenario {
		return scenario{name: name, lab: "t5-bench9000", unit: "blocks/s", goal: ">= 0.97", peerName: "--split=false", holdUS: hold,
			peer: func(p *pair) (sample, error) {
				return blocksOf(viaAgent(p, "--mode", "blocks", "--self-test=false", "--split=false"))
			},
			agent:  func(p *pair) (sample, error) { return blocksOf(viaAgent(p, "--mode", "blocks", "--self-test=false")) },
			direct: func(p *pair) (sample, error) { return blocksOf(ours(p, traffic.Spec{Mode: traffic.ModeBlocks})) },
			ratio:  div, met: atLeast(0.97)}
	}
	// Held, the round trip is a third as long and steadier: the split's
	// cost per block is a larger share of it, and the noise smaller.
	zero := int32(0)
	return []scenario{
		split("8 KiB blocks/s, round trip split on vs off, MTU 9000", nil),
		split("8 KiB blocks/s, round trip split on vs off, MTU 9000, PM QoS 0 held", &zero),
	}
}
