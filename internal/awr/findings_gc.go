package awr

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/rules"
)

// adder records a finding on the instance being judged; evidencer makes
// one piece of evidence from the report being judged.
type (
	adder     func(id string, sev rules.Severity, msg, fix, src string, evs ...rules.Evidence)
	evidencer func(what string, v float64) rules.Evidence
)

const fixLost = "find where datagrams are lost: 'interlink check --interconnect IF' on every node (Udp RcvbufErrors, Ip ReasmFails, NIC drops), 'interlink mesh' for an MTU mismatch or a switch port blackholing jumbo frames; then the switch counters"

// judgeLost applies AWR-GC-LOST. The blocks are the statistic gc blocks
// lost (and gc blocks corrupt) where the report prints it; only without it
// do the waits of the lost-block events stand in, and the finding then
// says they are waits. The severity comes from the waits' share of DB
// time, the cost the instance paid.
func judgeLost(in *Instance, ev evidencer, add adder) {
	var evs []rules.Evidence
	if in.GCBlocksLost != nil {
		evs = append(evs, ev("gc blocks lost ("+in.GCBlocksLostFrom+")", *in.GCBlocksLost))
	}
	if in.GCBlocksCorrupt != nil && *in.GCBlocksCorrupt > 0 {
		evs = append(evs, ev("gc blocks corrupt", *in.GCBlocksCorrupt))
	}
	waits, pct := 0.0, 0.0
	for _, n := range lostWaitEvents {
		if w := in.Wait(n); w != nil && w.Waits != nil && *w.Waits > 0 {
			waits += *w.Waits
			evs = append(evs, ev(n+" waits", *w.Waits))
			if w.PctDBTime != nil {
				pct += *w.PctDBTime
				evs = append(evs, ev(n+" % DB time", *w.PctDBTime))
			}
		}
	}
	var msg string
	lost, corrupt := val0(in.GCBlocksLost), val0(in.GCBlocksCorrupt)
	switch {
	case in.GCBlocksLost == nil && in.GCBlocksCorrupt == nil && waits > 0:
		msg = fmt.Sprintf("%s waits for lost blocks (gc cr/current block lost) in the interval; the report prints no gc blocks lost statistic, so the blocks themselves are not counted", g(waits))
	case lost > 0 && corrupt > 0:
		msg = fmt.Sprintf("%s blocks lost and %s corrupt on the interconnect in the interval", g(lost), g(corrupt))
	case lost > 0:
		msg = fmt.Sprintf("%s blocks lost on the interconnect in the interval", g(lost))
	case corrupt > 0:
		msg = fmt.Sprintf("%s blocks arrived corrupt over the interconnect in the interval", g(corrupt))
	default:
		return
	}
	sev := rules.Warning
	if pct >= 1 {
		sev = rules.Critical
	}
	add(RuleLost, sev, msg, fixLost, srcLost, evs...)
}

func val0(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// judgeTransfers applies AWR-GC-3WAY and AWR-GC-CONGESTED. Congestion is
// counted against every block request the report lists: the single-block
// events (2-way, 3-way, busy, congested) and the multi-block ones (gc cr
// multi block request, mixed, grant; gc current multi block request),
// which a scan-heavy workload waits on most. Grant-only requests of
// single blocks (gc cr grant 2-way, gc current grant busy, ...) move no
// block and are counted on neither side.
func judgeTransfers(in *Instance, ev evidencer, add adder) {
	two, three := waits(in, "2-way"), waits(in, "3-way")
	if three > 0 && three > two {
		add(RuleThreeWay, rules.Info, fmt.Sprintf("3-way transfers (%s waits) outnumber 2-way ones (%s)", g(three), g(two)),
			"three or more instances share the blocks: service affinity (one workload per instance) turns 3-way into 2-way or local access",
			src3way, ev("gc 3-way waits", three), ev("gc 2-way waits", two))
	}
	cong := waits(in, "congested")
	single := two + three + waits(in, "busy") + cong
	multi := multiBlockWaits(in)
	all := single + multi
	if all > 0 && cong/all > 0.10 {
		add(RuleCongested, rules.Warning, fmt.Sprintf("%.1f %% of block requests were congested", cong/all*100),
			"congestion is the serving instance's LMS waiting for CPU: check the LMS processes' CPU and priority on the serving nodes (and gcs_server_processes)",
			src3way, ev("gc cr/current block congested waits", cong), ev("gc single-block request waits (2-way, 3-way, busy, congested)", single),
			ev("gc multi block request waits (request, mixed, grant)", multi))
	}
}

// waits sums the waits of the gc cr and current block events of a kind
// (2-way, 3-way, busy, congested).
func waits(in *Instance, kind string) float64 {
	s := 0.0
	for _, n := range []string{"gc cr block " + kind, "gc current block " + kind} {
		if w := in.Wait(n); w != nil && w.Waits != nil {
			s += *w.Waits
		}
	}
	return s
}

// multiBlockWaits sums the waits of the multi-block request events: gc cr
// multi block request, mixed and grant, gc current multi block request
// (text reports cut names at 26 characters, hence the prefixes).
func multiBlockWaits(in *Instance) float64 {
	s := 0.0
	for _, w := range in.Waits {
		if (strings.HasPrefix(w.Name, "gc cr multi block") || strings.HasPrefix(w.Name, "gc current multi block")) && w.Waits != nil {
			s += *w.Waits
		}
	}
	return s
}
