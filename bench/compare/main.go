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
	// holdUS, when set, is a PM QoS CPU latency request this process
	// holds through all the scenario's runs, for every tool (tuned.go).
	holdUS *int32
}

// labSpecs are the labs the scenarios run in.
var labSpecs = []struct {
	name string
	mtu  int
	rate string
}{{"t5-bench1500", 1500, ""}, {"t5-bench9000", 9000, ""}, {"t5-bench1g", 1500, "1gbit"}}

// run sets up (tools, labs, agents), runs the scenarios and the gc
// workload, and returns the goals missed. Everything it starts is
// stopped, and every lab taken down, on the way out.
func run() error {
	if err := lab.CheckPrivilege(); err != nil {
		return fmt.Errorf("the comparison builds namespace labs and needs root: %w", err)
	}
	if err := installTools(); err != nil {
		return err
	}
	labs := map[string]*pair{}
	defer downLabs(labs)
	if err := upLabs(labs); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "t5-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var agents []*exec.Cmd
	defer func() { // the last started first, as deferred stops would
		for i := len(agents) - 1; i >= 0; i-- {
			stop(agents[i])
		}
	}()
	if err := startAgents(labs, dir, &agents); err != nil {
		return err
	}

	load0, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("interlink (through `interlink agent`, default settings) vs iperf3/sockperf: %d alternating rounds of %v, medians; ratio = interlink/peer per round, median [min..max] (load average before: %s)\n",
		*rounds, *duration, strings.Fields(string(load0) + " ?")[0])
	fmt.Printf("%-42s %-11s %26s %26s %22s %7s  %-16s %s\n", "scenario", "peer", "peer median", "interlink median", "ratio [min..max]", "direct", "goal", "")
	var missed goal.Missed
	for _, sc := range scenarios() {
		if *only != "" && !strings.Contains(sc.name, *only) {
			continue
		}
		if err := runScenario(sc, labs[sc.lab], &missed); err != nil {
			return err
		}
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

// installTools installs iperf3 and sockperf with apt-get where missing.
func installTools() error {
	updated := false
	for _, tool := range []string{"iperf3", "sockperf"} {
		if _, err := exec.LookPath(tool); err == nil {
			continue
		}
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
	return nil
}

// upLabs brings up labSpecs into labs, each as soon as it is up, so that
// downLabs takes down those that came up when a later one fails.
func upLabs(labs map[string]*pair) error {
	for _, l := range labSpecs {
		p, err := up(l.name, l.mtu, l.rate)
		if err != nil {
			return err
		}
		labs[l.name] = p
	}
	return nil
}

func downLabs(labs map[string]*pair) {
	for name := range labs {
		if err := lab.Down(name); err != nil {
			fmt.Fprintf(os.Stderr, "compare: lab down %s: %v\n", name, err)
		}
	}
}

// startAgents starts `interlink agent` in every lab's node2, and in the
// MTU 9000 lab a second one without UDP GSO, adding each to started as
// soon as it runs (for the caller to stop).
func startAgents(labs map[string]*pair, dir string, started *[]*exec.Cmd) error {
	var err error
	for _, p := range labs {
		if p.agent, err = startAgent(p, dir, 7471); err != nil {
			return err
		}
		*started = append(*started, p.agent.cmd)
	}
	// As on a kernel before 4.18 (UEK5, SLES 12): no UDP GSO at either end.
	p9 := labs["t5-bench9000"]
	if p9.noGSO, err = startAgent(p9, dir, 7472, traffic.NoGSOEnv+"=1"); err != nil {
		return err
	}
	*started = append(*started, p9.noGSO.cmd)
	if p9.tuned, err = startAgentArgs(p9, dir, 7473, []string{"--allow-cpu-latency"}); err != nil {
		return err
	}
	*started = append(*started, p9.tuned.cmd)
	return nil
}

// runScenario runs sc's rounds in lab p, prints its line and records a
// missed goal.
func runScenario(sc scenario, p *pair, missed *goal.Missed) error {
	if sc.holdUS != nil {
		release, err := holdForScenario(*sc.holdUS)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		defer release()
	}
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
	rm, rlo, rhi := goal.Spread(ratios)
	dm, _, _ := goal.Spread(dratios)
	met := sc.met(rm, pl, al)
	if !met {
		missed.Add(sc.name, rm, sc.goal)
	}
	fmt.Printf("%-42s %-11s %26s %26s %6.2f [%.2f..%.2f] %7.2f  %-16s %s\n", sc.name, sc.peerName, formatFigure(sc.unit, pm, pl), formatFigure(sc.unit, am, al), rm, rlo, rhi, dm, sc.goal, goal.Verdict(met))
	return nil
}

// formatFigure prints a median in the scenario's unit.
func formatFigure(unit string, x, loss float64) string {
	switch unit {
	case "goodput":
		return fmt.Sprintf("%s (loss %.1f%%)", units.FormatRate(x), loss)
	case "pkt/s":
		return fmt.Sprintf("%.0f pkt/s (loss %.1f%%)", x, loss)
	case "median RTT":
		return fmt.Sprintf("%.1f us", x/1e3)
	case "blocks/s":
		return fmt.Sprintf("%.0f blocks/s", x)
	default:
		return fmt.Sprintf("%.1f %%", x)
	}
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
