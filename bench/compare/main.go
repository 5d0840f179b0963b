//go:build linux

// Command compare runs interlink's traffic engines and the tools an
// operator would pick instead (iperf3, sockperf) side by side in the same
// namespace lab, alternating runs, and prints medians and ratios. It is
// what `make bench` runs; it needs root (it builds labs named t5-bench*)
// and installs iperf3 and sockperf with apt-get when they are missing.
//
// The interlink side drives the engines directly, each end in its own
// process in its lab node (ends.go), so the comparison measures the
// engines, not the agent session's per-datagram tags.
// Timing on a shared machine is noisy: read medians and ratios, not single
// runs.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

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

// pair is a two-node lab: node1 sends (the client), node2 receives.
type pair struct {
	name   string
	l      *lab.Lab
	n1, n2 *lab.Node
	a1, a2 netip.Addr
}

func up(name string, mtu int, rate string) (*pair, error) {
	topo, err := lab.Pair(name, mtu, rate)
	if err != nil {
		return nil, err
	}
	lab.Down(name) // a leftover of an interrupted run
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, topo)
	if err != nil {
		return nil, err
	}
	p := &pair{name: name, l: l}
	p.n1, _ = l.Node("node1")
	p.n2, _ = l.Node("node2")
	p.a1, p.a2 = p.n1.Addr("", 4), p.n2.Addr("", 4)
	return p, nil
}

// start runs a command in a node; it dies with this process.
func start(n *lab.Node, out *bytes.Buffer, name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.Start(cmd); err != nil {
		return nil, fmt.Errorf("%s in %s: %w", name, n.Name(), err)
	}
	return cmd, nil
}

// runIn runs a command in a node to completion, bounded in time.
func runIn(n *lab.Node, limit time.Duration, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd, err := start(n, &out, name, args...)
	if err != nil {
		return nil, err
	}
	t := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer t.Stop()
	if err := cmd.Wait(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLine(out.String()))
	}
	return out.Bytes(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func stop(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// iperf3 runs one iperf3 test from node1 to node2 and returns the parsed
// end of its JSON report.
func iperf3(p *pair, args ...string) (*iperfEnd, error) {
	var out bytes.Buffer
	srv, err := start(p.n2, &out, "iperf3", "-s", "-1", "-p", "5201", "-B", p.a2.String())
	if err != nil {
		return nil, err
	}
	defer stop(srv)
	time.Sleep(200 * time.Millisecond)
	secs := strconv.FormatFloat(duration.Seconds(), 'f', -1, 64)
	b, err := runIn(p.n1, *duration+10*time.Second, "iperf3", append([]string{"-c", p.a2.String(), "-p", "5201", "-t", secs, "-J"}, args...)...)
	if err != nil {
		return nil, err
	}
	var r struct {
		End   iperfEnd `json:"end"`
		Error string   `json:"error"`
	}
	// iperf3 prints warnings (fragmentation ahead) before its JSON.
	if i := bytes.IndexByte(b, '{'); i > 0 {
		b = b[i:]
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("iperf3 output: %w", err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("iperf3: %s", r.Error)
	}
	return &r.End, nil
}

type iperfSum struct {
	Seconds     float64 `json:"seconds"`
	BitsPerSec  float64 `json:"bits_per_second"`
	Packets     int64   `json:"packets"`
	LostPackets int64   `json:"lost_packets"`
	LostPercent float64 `json:"lost_percent"`
}

type iperfCPU struct {
	HostTotal   float64 `json:"host_total"`
	RemoteTotal float64 `json:"remote_total"`
}

type iperfEnd struct {
	CPU         iperfCPU `json:"cpu_utilization_percent"`
	Sum         iperfSum `json:"sum"`
	SumReceived iperfSum `json:"sum_received"`
}

// sockperfRTT runs sockperf ping-pong with msg-byte messages and returns
// the median round trip: sockperf reports half round trips.
func sockperfRTT(p *pair, msg int) (float64, error) {
	var out bytes.Buffer
	srv, err := start(p.n2, &out, "sockperf", "sr", "-i", p.a2.String(), "-p", "11111")
	if err != nil {
		return 0, err
	}
	defer stop(srv)
	time.Sleep(200 * time.Millisecond)
	secs := strconv.Itoa(max(1, int(duration.Seconds())))
	b, err := runIn(p.n1, *duration+10*time.Second, "sockperf", "pp", "-i", p.a2.String(), "-p", "11111", "-m", strconv.Itoa(msg), "-t", secs, "--mps=max")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`percentile 50\.000 =\s*([0-9.]+)`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("sockperf: no median in output: %s", lastLine(string(b)))
	}
	half, _ := strconv.ParseFloat(string(m[1]), 64)
	return 2 * half * 1e3, nil // ns
}

// sample is one run's figure, an optional second figure (loss) and what to
// print about it with -v.
type sample struct {
	v, loss float64
	note    string
}

type scenario struct {
	name, lab, unit, goal string
	higher                bool // higher is better
	peerName              string
	peer, ours            func(p *pair) (sample, error)
	// ratio turns the medians into the figure the goal is about.
	ratio func(peer, ours float64) float64
}

func median(xs []sample, f func(sample) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func run() error {
	if err := lab.CheckPrivilege(); err != nil {
		return fmt.Errorf("the comparison builds namespace labs and needs root: %w", err)
	}
	for _, tool := range []string{"iperf3", "sockperf"} {
		if _, err := exec.LookPath(tool); err != nil {
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

	gbit := func(x float64) string { return units.FormatRate(x) }
	tcp := func(p *pair) (sample, error) {
		s, err := ours(p, traffic.Spec{Mode: traffic.ModeTCP})
		return sample{v: s.BitsPerSec, note: cpuNote(s)}, err
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
			return sample{v: e.SumReceived.BitsPerSec, loss: e.SumReceived.LostPercent, note: e.cpu()}, nil
		}
	}
	udpOurs := func(size int) func(p *pair) (sample, error) {
		return func(p *pair) (sample, error) {
			s, err := ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: size, RateSet: true})
			return sample{v: s.BitsPerSec, loss: s.LossPercent, note: cpuNote(s)}, err
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
	ppsOurs := func(p *pair) (sample, error) {
		s, err := ours(p, traffic.Spec{Mode: traffic.ModeUDP, Len: 64, RateSet: true})
		return sample{v: s.PerSec, loss: s.LossPercent, note: cpuNote(s)}, err
	}
	div := func(peer, ours float64) float64 { return ours / peer }
	scenarios := []scenario{
		{name: "TCP 1 stream, MTU 9000", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0", higher: true, peerName: "iperf3",
			peer: iperfTCP, ours: tcp, ratio: div},
		{name: "UDP 8 KiB unpaced, MTU 1500", lab: "t5-bench1500", unit: "goodput", goal: ">= 1.0, loss <=", higher: true, peerName: "iperf3",
			peer: udpPeer("8192"), ours: udpOurs(8192), ratio: div},
		{name: "UDP 8 KiB unpaced, MTU 9000", lab: "t5-bench9000", unit: "goodput", goal: ">= 1.0, loss <=", higher: true, peerName: "iperf3",
			peer: udpPeer("8192"), ours: udpOurs(8192), ratio: div},
		{name: "UDP 64 B packet rate, MTU 1500", lab: "t5-bench1500", unit: "pkt/s", goal: ">= 1.5", higher: true, peerName: "iperf3",
			peer: pps, ours: ppsOurs, ratio: div},
		{name: "8 KiB round trip (8K both ways), MTU 9000", lab: "t5-bench9000", unit: "median RTT", goal: "<= 1.1", peerName: "sockperf pp",
			peer: func(p *pair) (sample, error) { v, err := sockperfRTT(p, 8192); return sample{v: v}, err },
			ours: func(p *pair) (sample, error) {
				s, err := ours(p, traffic.Spec{Mode: traffic.ModeBlocks, Request: 8192, Block: 8192})
				if err != nil || s.RTT == nil {
					return sample{}, fmt.Errorf("blocks: %v", err)
				}
				return sample{v: float64(s.RTT.P50)}, nil
			}, ratio: div},
		{name: "TCP on a 1 Gbit/s tbf link, MTU 1500", lab: "t5-bench1g", unit: "% of limit", goal: ">= 97 %", higher: true, peerName: "iperf3",
			peer: func(p *pair) (sample, error) {
				s, err := iperfTCP(p)
				return sample{v: 100 * s.v / (1e9 * traffic.TCPWireEfficiency(1500, 14))}, err
			},
			ours: func(p *pair) (sample, error) {
				s, err := ours(p, traffic.Spec{Mode: traffic.ModeTCP, LinkRateBitsPerSec: 1e9, LinkOverheadBytes: 14})
				return sample{v: s.PercentOfWireLimit}, err
			}, ratio: func(_, ours float64) float64 { return ours }},
	}
	load0, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("interlink vs iperf3/sockperf: %d alternating runs of %v each, medians (load average before: %s)\n",
		*rounds, *duration, strings.Fields(string(load0) + " ?")[0])
	fmt.Printf("%-42s %-12s %22s %22s %8s  %s\n", "scenario", "peer", "peer median", "interlink median", "ratio", "goal")
	for _, sc := range scenarios {
		if *only != "" && !strings.Contains(sc.name, *only) {
			continue
		}
		p := labs[sc.lab]
		var ps, os_ []sample
		for r := 0; r < *rounds; r++ {
			a, err := sc.peer(p)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", sc.name, sc.peerName, err)
			}
			ps = append(ps, a)
			b, err := sc.ours(p)
			if err != nil {
				return fmt.Errorf("%s: interlink: %w", sc.name, err)
			}
			os_ = append(os_, b)
			if *verbose {
				fmt.Printf("  run %d: %s %.4g %s | interlink %.4g %s\n", r+1, sc.peerName, a.v, a.note, b.v, b.note)
			}
		}
		v := func(s sample) float64 { return s.v }
		l := func(s sample) float64 { return s.loss }
		pm, om := median(ps, v), median(os_, v)
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
		fmt.Printf("%-42s %-12s %22s %22s %8.2f  %s\n", sc.name, sc.peerName, format(pm, median(ps, l)), format(om, median(os_, l)), sc.ratio(pm, om), sc.goal)
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average after: %s (other work on this machine skews single runs; ratios of medians are the figure)\n", strings.Fields(string(load1) + " ?")[0])
	return nil
}

func (e *iperfEnd) cpu() string {
	return fmt.Sprintf("(cpu: sender %.0f%%, receiver %.0f%% of a core)", e.CPU.HostTotal, e.CPU.RemoteTotal)
}

// cpuNote is interlink's CPU use of each end's test threads.
func cpuNote(s traffic.Summary) string {
	return fmt.Sprintf("(cpu: sender %.0f%%, receiver %.0f%% of a core; host softirq %.0f%% of a core)",
		100*s.ClientCost.Utilisation, 100*s.ServerCost.Utilisation, 100*float64(s.ClientCost.SoftIRQNs)/float64(max(s.Duration, 1)))
}
