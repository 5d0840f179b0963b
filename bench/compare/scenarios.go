//go:build linux

package main

import (
	"fmt"
	"os"

	"github.com/interlink/interlink/internal/traffic"
)

// The scenarios and how each side's run becomes a sample.

// minSession is the smallest datagram a session carries: its tag and the
// test header.
const minSession = "88"

func sumSample(s traffic.Summary, err error) (sample, error) {
	return sample{v: s.BitsPerSec, loss: s.LossPercent, note: cpuNote(s)}, err
}

func iperfTCP(p *pair) (sample, error) {
	e, err := iperf3(p)
	if err != nil {
		return sample{}, err
	}
	return sample{v: e.SumReceived.BitsPerSec, note: e.cpu()}, nil
}

func udpPeer(size string) func(p *pair) (sample, error) {
	return func(p *pair) (sample, error) {
		e, err := iperf3(p, "-u", "-b", "0", "-l", size)
		if err != nil {
			return sample{}, err
		}
		return sample{v: e.SumReceived.BitsPerSec, loss: e.SumReceived.LostPercent, note: fmt.Sprintf("%s loss %.2f%%", e.cpu(), e.SumReceived.LostPercent)}, nil
	}
}

func iperfPPS(p *pair) (sample, error) {
	e, err := iperf3(p, "-u", "-b", "0", "-l", "64")
	if err != nil {
		return sample{}, err
	}
	r := e.SumReceived
	return sample{v: float64(r.Packets-r.LostPackets) / r.Seconds, loss: r.LostPercent, note: e.cpu()}, nil
}

func ppsOf(s traffic.Summary, err error) (sample, error) {
	return sample{v: s.PerSec, loss: s.LossPercent, note: cpuNote(s)}, err
}

func rttOf(s traffic.Summary, err error) (sample, error) {
	if err == nil && s.RTT == nil {
		err = fmt.Errorf("blocks: no round trips")
	}
	if err != nil {
		return sample{}, err
	}
	return sample{v: float64(s.RTT.P50), note: fmt.Sprintf("(p99 %.1f us)", float64(s.RTT.P99)/1e3)}, nil
}

func pctOf(s traffic.Summary, err error) (sample, error) { return sample{v: s.PercentOfWireLimit}, err }

func div(peer, ours float64) float64 { return ours / peer }

func atLeast(goal float64) func(r, pl, ol float64) bool {
	return func(r, pl, ol float64) bool { return r >= goal }
}

func atMost(goal float64) func(r, pl, ol float64) bool {
	return func(r, _, _ float64) bool { return r <= goal }
}

func atLeastNoMoreLoss(r, pl, ol float64) bool { return r >= 1.0 && ol <= pl+0.1 }

// scenarios are all the scenarios, in the order they run.
func scenarios() []scenario {
	return append(append(append(throughputScenarios(), latencyScenarios()...), tunedScenarios()...), splitScenarios()...)
}

func throughputScenarios() []scenario {
	udp8K := func(name, labName string) scenario {
		return scenario{name: name, lab: labName, unit: "goodput", goal: ">= 1.0, loss <=", peerName: "iperf3",
			peer: udpPeer("8192"),
			agent: func(p *pair) (sample, error) {
				return sumSample(viaAgent(p, "--mode", "udp", "--len", "8K", "--rate", "0"))
			},
			direct: func(p *pair) (sample, error) {
				return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 8192, RateSet: true}))
			},
			ratio: div, met: atLeastNoMoreLoss}
	}
	// The fallback keeps its speed: one send per datagram, as interlink
	// sends where the kernel has no UDP_SEGMENT.
	noGSO8K := udp8K("UDP 8 KiB unpaced, MTU 9000, GSO off", "t5-bench9000")
	noGSO8K.agent = func(p *pair) (sample, error) {
		return sumSample(noGSO(benchVia(p, p.noGSO, "--mode", "udp", "--len", "8K", "--rate", "0")))
	}
	noGSO8K.direct = func(p *pair) (sample, error) {
		os.Setenv(traffic.NoGSOEnv, "1") // this process and the re-executed server end
		defer os.Unsetenv(traffic.NoGSOEnv)
		return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 8192, RateSet: true}))
	}
	return []scenario{
		{name: "TCP 1 stream, MTU 9000", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0", peerName: "iperf3",
			peer:   iperfTCP,
			agent:  func(p *pair) (sample, error) { return sumSample(viaAgent(p, "--mode", "tcp")) },
			direct: func(p *pair) (sample, error) { return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeTCP})) },
			ratio:  div, met: atLeast(1.0)},
		udp8K("UDP 8 KiB unpaced, MTU 1500", "t5-bench1500"),
		udp8K("UDP 8 KiB unpaced, MTU 9000", "t5-bench9000"),
		noGSO8K,
		{name: "UDP small-datagram rate, MTU 1500", lab: "t5-bench1500", unit: "pkt/s", goal: ">= 1.5", peerName: "iperf3 64B",
			peer: iperfPPS,
			agent: func(p *pair) (sample, error) {
				return ppsOf(viaAgent(p, "--mode", "udp", "--len", minSession, "--rate", "0"))
			},
			direct: func(p *pair) (sample, error) {
				return ppsOf(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 64, RateSet: true}))
			},
			ratio: div, met: atLeast(1.5)},
	}
}

func latencyScenarios() []scenario {
	return []scenario{
		{name: "8 KiB round trip (8K both ways), MTU 9000", lab: "t5-bench9000", unit: "median RTT", goal: "<= 1.0", peerName: "sockperf pp",
			peer: func(p *pair) (sample, error) { v, err := sockperfRTT(p, 8192, "max"); return sample{v: v}, err },
			agent: func(p *pair) (sample, error) {
				return rttOf(viaAgent(p, "--mode", "blocks", "--request", "8K", "--block", "8K"))
			},
			direct: func(p *pair) (sample, error) {
				return rttOf(ours(p, traffic.Spec{Mode: traffic.ModeBlocks, Request: 8192, Block: 8192}))
			},
			ratio: div, met: atMost(1.0)},
		// Lone round trips, one every 10 ms (what a ping table measures):
		// each pays for waking the threads at both ends.
		{name: "8 KiB lone round trip (100/s), MTU 9000", lab: "t5-bench9000", unit: "median RTT", goal: "<= 1.0", peerName: "sockperf --mps",
			peer: func(p *pair) (sample, error) { v, err := sockperfRTT(p, 8192, "100"); return sample{v: v}, err },
			agent: func(p *pair) (sample, error) {
				return rttOf(viaAgent(p, "--mode", "blocks", "--request", "8K", "--block", "8K", "--rate", "100"))
			},
			direct: func(p *pair) (sample, error) {
				return rttOf(ours(p, traffic.Spec{Mode: traffic.ModeBlocks, Request: 8192, Block: 8192, RequestsPerSec: 100}))
			},
			ratio: div, met: atMost(1.0)},
		{name: "TCP on a 1 Gbit/s tbf link, MTU 1500", lab: "t5-bench1g", unit: "% of limit", goal: ">= 97 %", peerName: "iperf3",
			peer: func(p *pair) (sample, error) {
				s, err := iperfTCP(p)
				return sample{v: 100 * s.v / (1e9 * traffic.TCPWireEfficiency(1500, 14))}, err
			},
			agent: func(p *pair) (sample, error) {
				return pctOf(viaAgent(p, "--mode", "tcp", "--link-rate", "1gbit", "--link-overhead", "14"))
			},
			direct: func(p *pair) (sample, error) {
				return pctOf(ours(p, traffic.Spec{Mode: traffic.ModeTCP, LinkRateBitsPerSec: 1e9, LinkOverheadBytes: 14}))
			},
			ratio: func(_, ours float64) float64 { return ours }, met: atLeast(97)},
	}
}
