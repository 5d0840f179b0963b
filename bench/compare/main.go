//go:build linux

// Command compare runs interlink's traffic engines and the tools an
// operator would pick instead (iperf3, sockperf) side by side in the same
// namespace lab, alternating runs, and prints medians and ratios. It is
// what `make bench` runs; it needs root (it builds labs named t5-bench*)
// and installs iperf3 and sockperf with apt-get when they are missing.
//
// The interlink side is run as users run it (agent.go): `interlink agent`
// with its default settings in node2, `interlink bench` in node1. The
// engines driven directly, without the agent session (ends.go), are an
// extra column: the difference is what the session costs.
// Each round runs the peer tool, interlink through the agent and the
// engines directly, one after the other; ratios are taken per round and
// printed as the median with their spread (min..max). compare exits 1
// naming every ratio that misses its goal.
// Timing on a shared machine is noisy: read medians and spreads, not
// single runs. Then (gc.go) `interlink bench --mode gc` runs on two 3-node
// labs, at MTU 9000 and 1500: blocks per second and agent CPU per block.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/interlink/interlink/bench/goal"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

var flagSet = flag.CommandLine

var (
	rounds   = flag.Int("rounds", 3, "runs of each tool per scenario (alternating)")
	duration = flag.Duration("time", 3*time.Second, "length of each run")
	only     = flag.String("only", "", "run only scenarios whose name contains this")
	verbose  = flag.Bool("v", false, "print every run with both ends' CPU use")
)

func main() {
	flag.Parse()
	if *serve != "" {
		if err := serveEnd(*serve); err != nil {
			fmt.Fprintf(os.Stderr, "compare -serve: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "compare: %v\n", err)
		os.Exit(1)
	}
}

// sample is one run's figure, an optional second figure (loss) and what to
// print about it with -v.
type sample struct {
	v, loss float64
	note    string
}

type scenario struct {
	name, lab, unit, goal string
	peerName              string
	// peer is the other tool, agent interlink through `interlink agent`,
	// direct the engines without the agent session.
	peer, agent, direct func(p *pair) (sample, error)
	// ratio turns a round's figures into the figure the goal is about;
	// met says whether a ratio (and the losses) meet the goal.
	ratio func(peer, ours float64) float64
	met   func(ratio, peerLoss, oursLoss float64) bool
}

func run() error {
	if err := lab.CheckPrivilege(); err != nil {
		return fmt.Errorf("the comparison builds namespace labs and needs root: %w", err)
	}
	updated := false
	for _, tool := range []string{"iperf3", "sockperf"} {
		if _, err := exec.LookPath(tool); err != nil {
			if !updated {
				// A fresh image has no package lists: install would fail.
				fmt.Println("apt-get update")
				if out, err := exec.Command("apt-get", "update").CombinedOutput(); err != nil {
					return fmt.Errorf("apt-get update: %w: %s", err, lastLine(string(out)))
				}
				updated = true
			}
			fmt.Printf("installing %s (apt-get install -y %s)\n", tool, tool)
			cmd := exec.Command("apt-get", "install", "-y", tool)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("apt-get install %s: %w: %s", tool, err, lastLine(string(out)))
			}
		}
	}
	labs := map[string]*pair{}
	defer func() {
		for name := range labs {
			if err := lab.Down(name); err != nil {
				fmt.Fprintf(os.Stderr, "compare: lab down %s: %v\n", name, err)
			}
		}
	}()
	for _, l := range []struct {
		name string
		mtu  int
		rate string
	}{{"t5-bench1500", 1500, ""}, {"t5-bench9000", 9000, ""}, {"t5-bench1g", 1500, "1gbit"}} {
		p, err := up(l.name, l.mtu, l.rate)
		if err != nil {
			return err
		}
		labs[l.name] = p
	}

	dir, err := os.MkdirTemp("", "t5-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, p := range labs {
		if p.agent, err = startAgent(p, dir, 7471); err != nil {
			return err
		}
		defer stop(p.agent.cmd)
	}
	// As on a kernel before 4.18 (UEK5, SLES 12): no UDP GSO at either end.
	p9 := labs["t5-bench9000"]
	if p9.noGSO, err = startAgent(p9, dir, 7472, traffic.NoGSOEnv+"=1"); err != nil {
		return err
	}
	defer stop(p9.noGSO.cmd)

	gbit := func(x float64) string { return units.FormatRate(x) }
	sumSample := func(s traffic.Summary, err error) (sample, error) {
		return sample{v: s.BitsPerSec, loss: s.LossPercent, note: cpuNote(s)}, err
	}
	iperfTCP := func(p *pair) (sample, error) {
		e, err := iperf3(p)
		if err != nil {
			return sample{}, err
		}
		return sample{v: e.SumReceived.BitsPerSec, note: e.cpu()}, nil
	}
	udpPeer := func(size string) func(p *pair) (sample, error) {
		return func(p *pair) (sample, error) {
			e, err := iperf3(p, "-u", "-b", "0", "-l", size)
			if err != nil {
				return sample{}, err
			}
			return sample{v: e.SumReceived.BitsPerSec, loss: e.SumReceived.LostPercent, note: fmt.Sprintf("%s loss %.2f%%", e.cpu(), e.SumReceived.LostPercent)}, nil
		}
	}
	pps := func(p *pair) (sample, error) {
		e, err := iperf3(p, "-u", "-b", "0", "-l", "64")
		if err != nil {
			return sample{}, err
		}
		r := e.SumReceived
		return sample{v: float64(r.Packets-r.LostPackets) / r.Seconds, loss: r.LostPercent, note: e.cpu()}, nil
	}
	ppsOf := func(s traffic.Summary, err error) (sample, error) {
		return sample{v: s.PerSec, loss: s.LossPercent, note: cpuNote(s)}, err
	}
	rttOf := func(s traffic.Summary, err error) (sample, error) {
		if err == nil && s.RTT == nil {
			err = fmt.Errorf("blocks: no round trips")
		}
		if err != nil {
			return sample{}, err
		}
		return sample{v: float64(s.RTT.P50), note: fmt.Sprintf("(p99 %.1f us)", float64(s.RTT.P99)/1e3)}, nil
	}
	pctOf := func(s traffic.Summary, err error) (sample, error) { return sample{v: s.PercentOfWireLimit}, err }
	div := func(peer, ours float64) float64 { return ours / peer }
	atLeast := func(goal float64) func(r, pl, ol float64) bool {
		return func(r, pl, ol float64) bool { return r >= goal }
	}
	atLeastNoMoreLoss := func(r, pl, ol float64) bool { return r >= 1.0 && ol <= pl+0.1 }
	// The smallest datagram a session carries: its tag and the test header.
	const minSession = "88"
	scenarios := []scenario{
		{name: "TCP 1 stream, MTU 9000", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0", peerName: "iperf3",
			peer:   iperfTCP,
			agent:  func(p *pair) (sample, error) { return sumSample(viaAgent(p, "--mode", "tcp")) },
			direct: func(p *pair) (sample, error) { return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeTCP})) },
			ratio:  div, met: atLeast(1.0)},
		{name: "UDP 8 KiB unpaced, MTU 1500", lab: "t5-bench1500", unit: "goodput", goal: ">= 1.0, loss <=", peerName: "iperf3",
			peer: udpPeer("8192"),
			agent: func(p *pair) (sample, error) {
				return sumSample(viaAgent(p, "--mode", "udp", "--len", "8K", "--rate", "0"))
			},
			direct: func(p *pair) (sample, error) {
				return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 8192, RateSet: true}))
			},
			ratio: div, met: atLeastNoMoreLoss},
		{name: "UDP 8 KiB unpaced, MTU 9000", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0, loss <=", peerName: "iperf3",
			peer: udpPeer("8192"),
			agent: func(p *pair) (sample, error) {
				return sumSample(viaAgent(p, "--mode", "udp", "--len", "8K", "--rate", "0"))
			},
			direct: func(p *pair) (sample, error) {
				return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 8192, RateSet: true}))
			},
			ratio: div, met: atLeastNoMoreLoss},
		// The fallback keeps its speed: one send per datagram, as
		// interlink sends where the kernel has no UDP_SEGMENT.
		{name: "UDP 8 KiB unpaced, MTU 9000, GSO off", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0, loss <=", peerName: "iperf3",
			peer: udpPeer("8192"),
			agent: func(p *pair) (sample, error) {
				return sumSample(noGSO(benchVia(p, p.noGSO, "--mode", "udp", "--len", "8K", "--rate", "0")))
			},
			direct: func(p *pair) (sample, error) {
				os.Setenv(traffic.NoGSOEnv, "1") // this process and the re-executed server end
				defer os.Unsetenv(traffic.NoGSOEnv)
				return sumSample(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 8192, RateSet: true}))
			},
			ratio: div, met: atLeastNoMoreLoss},
		{name: "UDP small-datagram rate, MTU 1500", lab: "t5-bench1500", unit: "pkt/s", goal: ">= 1.5", peerName: "iperf3 64B",
			peer: pps,
			agent: func(p *pair) (sample, error) {
				return ppsOf(viaAgent(p, "--mode", "udp", "--len", minSession, "--rate", "0"))
			},
			direct: func(p *pair) (sample, error) {
				return ppsOf(ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 64, RateSet: true}))
			},
			ratio: div, met: atLeast(1.5)},
		{name: "8 KiB round trip (8K both ways), MTU 9000", lab: "t5-bench9000", unit: "median RTT", goal: "<= 1.0", peerName: "sockperf pp",
			peer: func(p *pair) (sample, error) { v, err := sockperfRTT(p, 8192, "max"); return sample{v: v}, err },
			agent: func(p *pair) (sample, error) {
				return rttOf(viaAgent(p, "--mode", "blocks", "--request", "8K", "--block", "8K"))
			},
			direct: func(p *pair) (sample, error) {
				return rttOf(ours(p, traffic.Spec{Mode: traffic.ModeBlocks, Request: 8192, Block: 8192}))
			},
			ratio: div, met: func(r, _, _ float64) bool { return r <= 1.0 }},
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
			ratio: div, met: func(r, _, _ float64) bool { return r <= 1.0 }},
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
			ratio: func(_, ours float64) float64 { return ours }, met: func(r, _, _ float64) bool { return r >= 97 }},
	}
	load0, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("interlink (through `interlink agent`, default settings) vs iperf3/sockperf: %d alternating rounds of %v, medians; ratio = interlink/peer per round, median [min..max] (load average before: %s)\n",
		*rounds, *duration, strings.Fields(string(load0) + " ?")[0])
	fmt.Printf("%-42s %-11s %26s %26s %22s %7s  %-16s %s\n", "scenario", "peer", "peer median", "interlink median", "ratio [min..max]", "direct", "goal", "")
	var missed goal.Missed
	for _, sc := range scenarios {
		if *only != "" && !strings.Contains(sc.name, *only) {
			continue
		}
		p := labs[sc.lab]
		var ps, as []sample
		var ratios, dratios []float64
		for r := 0; r < *rounds; r++ {
			a, err := sc.peer(p)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", sc.name, sc.peerName, err)
			}
			b, err := sc.agent(p)
			if err != nil {
				return fmt.Errorf("%s: interlink: %w", sc.name, err)
			}
			c, err := sc.direct(p)
			if err != nil {
				return fmt.Errorf("%s: interlink engines direct: %w", sc.name, err)
			}
			ps, as = append(ps, a), append(as, b)
			ratios = append(ratios, sc.ratio(a.v, b.v))
			dratios = append(dratios, sc.ratio(a.v, c.v))
			if *verbose {
				fmt.Printf("  round %d: %s %.4g %s | interlink %.4g %s | direct %.4g %s\n", r+1, sc.peerName, a.v, a.note, b.v, b.note, c.v, c.note)
			}
		}
		v := func(s sample) float64 { return s.v }
		l := func(s sample) float64 { return s.loss }
		pm, am := median(ps, v), median(as, v)
		pl, al := median(ps, l), median(as, l)
		format := func(x, loss float64) string {
			switch sc.unit {
			case "goodput":
				return fmt.Sprintf("%s (loss %.1f%%)", gbit(x), loss)
			case "pkt/s":
				return fmt.Sprintf("%.0f pkt/s (loss %.1f%%)", x, loss)
			case "median RTT":
				return fmt.Sprintf("%.1f us", x/1e3)
			default:
				return fmt.Sprintf("%.1f %%", x)
			}
		}
		rm, rlo, rhi := goal.Spread(ratios)
		dm, _, _ := goal.Spread(dratios)
		met := sc.met(rm, pl, al)
		if !met {
			missed.Add(sc.name, rm, sc.goal)
		}
		fmt.Printf("%-42s %-11s %26s %26s %6.2f [%.2f..%.2f] %7.2f  %-16s %s\n", sc.name, sc.peerName, format(pm, pl), format(am, al), rm, rlo, rhi, dm, sc.goal, goal.Verdict(met))
	}
	if *only == "" || strings.Contains("gc", *only) {
		m, err := runGC(dir)
		if err != nil {
			return err
		}
		missed = append(missed, m...)
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average after: %s (other work on this machine skews single runs; read medians and spreads)\n", strings.Fields(string(load1) + " ?")[0])
	return missed.Err()
}

// noGSO is the summary of a flow whose sender must have sent without UDP
// GSO, or an error: a scenario about the fallback must not measure GSO.
func noGSO(f traffic.Flow, err error) (traffic.Summary, error) {
	if err != nil {
		return f.Summary, err
	}
	if f.Client == nil || f.Client.UDP == nil || f.Client.UDP.NoGSO == "" || f.Client.UDP.GSO > 1 {
		return f.Summary, fmt.Errorf("the sender used UDP GSO although %s=1 was set", traffic.NoGSOEnv)
	}
	return f.Summary, nil
}

// cpuNote is interlink's CPU use of each end's test threads, and for
// UDP its loss and, when flow-controlled, the bottleneck end.
func cpuNote(s traffic.Summary) string {
	note := fmt.Sprintf("(cpu: sender %.0f%%, receiver %.0f%% of a core; host softirq %.0f%% of a core",
		100*s.ClientCost.Utilisation, 100*s.ServerCost.Utilisation, 100*float64(s.ClientCost.SoftIRQNs)/float64(max(s.Duration, 1)))
	if s.Sent > 0 {
		note += fmt.Sprintf("; loss %.2f%%", s.LossPercent)
	}
	if f := s.Flow; f != nil {
		note += fmt.Sprintf("; %s-bound, waited on the window %.0f%%", f.Bottleneck, f.WaitPercent)
	}
	return note + ")"
}
