package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
	"github.com/interlink/interlink/internal/wire"
)

func init() { commands = append(commands, newBenchCmd) }

// BenchReport is the result of `interlink bench`, owned by package traffic.
type BenchReport = traffic.Report

// benchFlags are bench's flags; gc holds those only --mode gc reads.
type benchFlags struct {
	mode, tokenFile, length, rate, request, block, linkRate string
	cpuLatency                                              string
	dur, interval, timeout                                  time.Duration
	parallel, outstanding, cpu, peerCPU, overhead           int
	reverse, bidir, asJSON, selfTest, flow, split           bool
	out                                                     outputFlags
	gc                                                      gcFlags
}

const benchLong = `Measure the path to PEER, where 'interlink agent' runs, with the traffic a cluster
sends, and what it costs at both ends:

  tcp     one or more streams (--parallel), --len write size, --reverse, --bidir;
          retransmits and RTT per stream from TCP_INFO
  udp     datagrams of --len bytes (may exceed the MTU: fragmentation is the point),
          paced to --rate (default 1gbit); loss, reordering, duplicates and
          RFC 3550 jitter from sequence numbers. --rate 0 sends as fast as the
          receiver reads: its feedback keeps the sender within what its socket
          buffer holds, and the result says which end was the bottleneck;
          --rate 0 --flow=false blasts unpaced (loss then shows how far the
          sender outran the receiver)
  blocks  Cache Fusion: a --request answered by a --block (8K; up to 1M, split into
          datagrams above 64 KiB), --outstanding in flight (or paced to --rate
          requests per second, as sockperf --mps paces); blocks/s and round-trip
          p50/p90/p99/p99.9/max; a block not whole within --timeout is lost;
          each round trip split into the two hosts' wake-ups, the agent's work
          and network and stacks (--split), with a verdict when wake-ups are most
          of it
  gc      Cache Fusion across the cluster: 'bench --mode gc NODE NODE...' (or --nodes
          FILE; NODE is [NAME=]AGENT[:PORT][@ADDR], ADDR the interconnect address)
          runs requesters and block servers on every node's agent at once; the
          agents exchange --request messages and --block blocks directly over UDP,
          sealed with per-pair session keys. Blocks (--blocks, --skew) are mastered
          by hash: the master ships a block it holds (2-way) or forwards the request
          to the holder, which ships it (3-way); --current-share of the requests
          move ownership; --outstanding in flight per node, paced to --rate
          requests per second per node when given. Per pair: blocks/s,
          2-way and 3-way receive times, lost blocks (requested = received + lost);
          per node: cpu, fragments and packets per block, AWR's wait events, and
          AWR's "Interconnect Ping Latency Stats" (500 B and 8 KiB pings to every
          node every --ping-interval while the workload runs). JSON schema
          interlink.gc/v1. Exit 2 when a pair lost over 1 % of its blocks, 3 when
          a node could not be reached (the others are measured), 1 for any other
          loss or a send limit that held the run back.

Every result carries, for both ends: CPU (user and system of the test's threads,
host softirq) per GiB and per block, IP packets and fragments per message and
reassembly counters from the kernel, loss split by where it happened (sender
queue, network, receiver socket buffer, reassembly), and goodput as a share of
the wire limit for the path MTU when the link rate is known.`

func newBenchCmd(e *env) *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench PEER --mode tcp|udp|blocks | --mode gc NODE... --token-file FILE",
		Short: "Measure what the interconnect delivers: TCP, paced UDP, 8 KiB blocks to an agent; Cache Fusion across every node",
		Long:  benchLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if m, _ := cmd.Flags().GetString("mode"); m == "gc" {
				return nil // the nodes: checked by runGC
			}
			return exactArgs(1, "a PEER (host or host:port of an interlink agent)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runBench(e, cmd, args, &f) },
	}
	f.bind(c.Flags())
	return c
}

func (b *benchFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&b.mode, "mode", "tcp", "tcp, udp, blocks or gc")
	f.StringVar(&b.tokenFile, "token-file", "", "file holding the agent's shared token")
	f.DurationVar(&b.dur, "time", 10*time.Second, "how long to send (at most 1h)")
	f.DurationVar(&b.interval, "interval", time.Second, "per-interval lines every (at least 100ms)")
	f.IntVar(&b.parallel, "parallel", 1, "tcp: streams")
	f.StringVar(&b.length, "len", "", "tcp write size (default 128K) or udp datagram size (default 8K, may exceed the MTU)")
	f.BoolVar(&b.reverse, "reverse", false, "tcp, udp: the peer sends")
	f.BoolVar(&b.bidir, "bidir", false, "tcp: both directions at once")
	f.StringVar(&b.rate, "rate", "", "udp: payload rate (default 1gbit; 0 = unpaced, as fast as the receiver reads: see --flow); blocks: requests per second, each alone (as sockperf --mps); gc: requests per second per node (default: as fast as --outstanding allows)")
	f.BoolVar(&b.flow, "flow", true, "udp --rate 0: the receiver's feedback keeps the sender within its socket buffer; --flow=false blasts")
	f.StringVar(&b.request, "request", "", "blocks, gc: request size (default 256)")
	f.StringVar(&b.block, "block", "", "blocks, gc: block size (default 8K, at most 1M)")
	f.IntVar(&b.outstanding, "outstanding", 1, "blocks: requests in flight; gc: per node (default 4)")
	f.BoolVar(&b.selfTest, "self-test", true, "blocks: after the run, the same blocks on loopback in this process (0.5 s), as data")
	f.BoolVar(&b.split, "split", true, "blocks, gc: split each round trip into both hosts' wake-ups, the agent's work and network and stacks, from kernel receive stamps at both ends (--split=false: no stamps, to measure what splitting costs)")
	f.DurationVar(&b.timeout, "timeout", 500*time.Millisecond, "blocks, gc: a block not whole by then is lost")
	f.IntVar(&b.cpu, "cpu", -1, "pin this end's test threads to a CPU")
	f.IntVar(&b.peerCPU, "peer-cpu", -1, "pin the agent's test threads to a CPU")
	f.StringVar(&b.linkRate, "link-rate", "auto", "line rate for the wire limit (auto: sysfs speed; 0: unknown)")
	f.IntVar(&b.overhead, "link-overhead", traffic.EthernetOverhead, "bytes per packet the link rate counts beyond IP (38 Ethernet, 14 for a tbf shaper)")
	f.StringVar(&b.cpuLatency, "cpu-latency", "", cpuLatencyHelp)
	f.BoolVar(&b.asJSON, "json", false, "print JSON (schema interlink.bench/v1; interlink.gc/v1 with --mode gc)")
	b.gc.add(f)
	b.out.add(f)
}

// runBench validates the flags into a spec, dials the agent, runs the
// measurement and prints it; --mode gc goes to runGC.
func runBench(e *env, cmd *cobra.Command, args []string, f *benchFlags) error {
	if err := checkGCFlags(cmd.Flags(), f.mode); err != nil {
		return err
	}
	cpuLat, err := parseCPULatency(cmd.Flags().Changed("cpu-latency"), f.cpuLatency)
	if err != nil {
		return err
	}
	if f.mode == "gc" {
		if !cmd.Flags().Changed("outstanding") {
			f.outstanding = gc.DefaultOutstanding
		}
		return runGC(e, cmd, args, gcArgs{tokenFile: f.tokenFile, request: f.request, block: f.block, rate: f.rate, dur: f.dur,
			timeout: f.timeout, outstanding: f.outstanding, asJSON: f.asJSON, split: f.split, out: f.out, cpuLatency: cpuLat}, f.gc)
	}
	spec, norm, err := benchSpec(cmd.Flags(), f)
	if err != nil {
		return err
	}
	if err := f.out.check("bench"); err != nil {
		return err
	}
	tok, err := agent.ReadToken(f.tokenFile)
	if err != nil {
		return usageError("bench: %v", trimToken(err))
	}
	addr, err := agent.HostPort(args[0])
	if err != nil {
		return usageError("bench: PEER %q: %v", args[0], err)
	}
	if err := fence(e, "bench", addr); err != nil {
		return err
	}
	client, err := agent.Dial(e.ctx, addr, tok, agent.DialOptions{Software: "interlink " + buildVersion().Version})
	if err != nil {
		if e.ctx.Err() != nil {
			return fmt.Errorf("bench: interrupted while connecting to the agent at %s: nothing was measured", addr)
		}
		return fmt.Errorf("bench: %w", err)
	}
	defer client.Close()
	if f.linkRate == "auto" {
		spec.LinkRateBitsPerSec = traffic.LinkRate(client.LocalAddr().Addr())
	}
	var hold *cpuHold // the agent's ends with the session
	if cpuLat != nil {
		hold = holdCPULatency(e.ctx, *cpuLat, []*agent.Client{client})
		defer hold.release()
	}
	return benchMeasure(e, f, client, addr, spec, norm, hold)
}

// benchSpec checks the flags, in the order users meet them, and builds
// the traffic spec and its normalized form.
func benchSpec(fl *pflag.FlagSet, f *benchFlags) (traffic.Spec, traffic.Spec, error) {
	spec := traffic.Spec{Mode: traffic.Mode(f.mode), Duration: f.dur, Interval: f.interval, Parallel: f.parallel,
		Reverse: f.reverse, Bidir: f.bidir, Outstanding: f.outstanding, BlockTimeout: f.timeout, LinkOverheadBytes: f.overhead}
	var none traffic.Spec
	if err := benchBasics(fl, f); err != nil {
		return none, none, err
	}
	sizes := []struct {
		flag, val string
		dst       *int
	}{{"--len", f.length, &spec.Len}, {"--request", f.request, &spec.Request}, {"--block", f.block, &spec.Block}}
	for _, s := range sizes {
		if s.val == "" {
			continue
		}
		n, err := benchSize(s.flag, s.val)
		if err != nil {
			return none, none, err
		}
		*s.dst = n
	}
	if err := benchRates(fl, f, &spec); err != nil {
		return none, none, err
	}
	norm, err := spec.Normalize()
	if err != nil {
		return none, none, usageError("bench: %v", strings.TrimPrefix(err.Error(), traffic.ErrSpec.Error()+": "))
	}
	// Every datagram of a session carries the session's tagged header
	// before the engine's own.
	if minLen := wire.HeaderLen + traffic.HeaderLen; norm.Mode == traffic.ModeUDP && norm.Len < minLen ||
		norm.Mode == traffic.ModeBlocks && min(norm.Request, norm.Block) < minLen {
		return none, none, usageError("bench: datagrams must hold at least %d bytes (the session's and the test's headers)", minLen)
	}
	return spec, norm, nil
}

// benchBasics checks the mode, the token file, the duration and the
// flags that mean nothing in the mode.
func benchBasics(fl *pflag.FlagSet, f *benchFlags) error {
	if f.mode != "tcp" && f.mode != "udp" && f.mode != "blocks" {
		return usageError("bench: --mode %q: want tcp, udp, blocks or gc", f.mode)
	}
	if f.tokenFile == "" {
		return usageError("bench: --token-file FILE is required (the agent's shared token)")
	}
	if f.dur <= 0 || f.dur > traffic.MaxDuration {
		return usageError("bench: --time %v: want more than 0 and at most %v", f.dur, traffic.MaxDuration)
	}
	if f.bidir && f.mode != "tcp" || f.reverse && f.mode == "blocks" {
		return usageError("bench: --bidir is for tcp and --reverse for tcp and udp")
	}
	return checkBenchFlags(fl, f.mode)
}

// benchSize parses a size flag: 1 byte to 1 GiB.
func benchSize(flag, val string) (int, error) {
	n, err := units.ParseSize(val)
	if err != nil {
		return 0, usageError("bench: %s: %v", flag, err)
	}
	if n <= 0 {
		return 0, usageError("bench: %s %s: want at least 1 byte", flag, val)
	}
	if n > 1<<30 {
		return 0, usageError("bench: %s %s: too large", flag, val)
	}
	return int(n), nil
}

// benchRates fills the spec's pacing, --flow, CPU pinning and link rate.
func benchRates(fl *pflag.FlagSet, f *benchFlags, spec *traffic.Spec) error {
	switch {
	case f.rate != "" && f.mode == "blocks":
		r, err := requestRate(f.rate, f.mode, "requests per second", traffic.MaxRequestsPerSec)
		if err != nil {
			return err
		}
		spec.RequestsPerSec = r
	case f.rate != "":
		r, err := units.ParseRate(f.rate)
		if err != nil {
			return usageError("bench: --rate: %v", err)
		}
		spec.RateBitsPerSec, spec.RateSet = r, true
	}
	if fl.Changed("flow") && (!spec.RateSet || spec.RateBitsPerSec != 0) {
		return usageError("bench: --flow is for unpaced udp (--rate 0): a paced sender sends at its rate")
	}
	spec.NoFlow = !f.flow
	spec.NoSplit = !f.split
	if f.cpu >= 0 {
		cpu := f.cpu
		spec.CPU = &cpu
	}
	if f.peerCPU >= 0 {
		peerCPU := f.peerCPU
		spec.PeerCPU = &peerCPU
	}
	if f.linkRate != "auto" {
		r, err := units.ParseRate(f.linkRate)
		if err != nil {
			return usageError("bench: --link-rate: %v", err)
		}
		spec.LinkRateBitsPerSec = r
	}
	return nil
}

// benchMeasure runs spec against the agent, printing intervals as they
// come (text), then the report; it returns the run's exit code.
func benchMeasure(e *env, f *benchFlags, client *agent.Client, addr string, spec, norm traffic.Spec, hold *cpuHold) error {
	var mu sync.Mutex
	// The header waits for the first result, so that a run the
	// agent refuses (--peer-cpu it cannot honour) prints one line.
	header := sync.OnceFunc(func() {
		if !f.asJSON {
			traffic.WriteHeader(e.stdout, addr, client.Agent, spec)
			if lim := client.Limits.MaxRateBitsPerSec; lim > 0 && (spec.Mode == "blocks" || f.reverse || f.bidir) {
				fmt.Fprintf(e.stdout, "agent send limit: %s per session (reported if it holds this run back)\n", units.FormatRate(lim))
			}
			hold.writeText(e)
		}
	})
	obs := func(d traffic.Direction, r traffic.Role, in traffic.Interval) {
		if f.asJSON {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		header()
		traffic.WriteInterval(e.stdout, spec.Mode, d, r, in)
	}
	res, err := traffic.RunRemote(e.ctx, client, spec, obs)
	hold.release() // the run's end; the agent's goes with the session
	if res == nil {
		if e.ctx.Err() != nil {
			released := ""
			if hold != nil {
				released = "; the CPU latency requests were released"
			}
			return fmt.Errorf("bench: interrupted before the run started: nothing was measured%s", released)
		}
		return fmt.Errorf("bench: %w", err)
	}
	header()
	rep := BenchReport{Schema: traffic.Schema, Peer: addr, Agent: client.Agent, Result: res, Interrupted: e.ctx.Err() != nil, CPULatency: hold.report()}
	if f.selfTest && spec.Mode == traffic.ModeBlocks && err == nil && !rep.Interrupted {
		rep.SelfTest = traffic.RunSelfTest(e.ctx, norm)
	}
	if f.asJSON {
		if jerr := report.JSON(e.stdout, rep); jerr != nil {
			return jerr
		}
	} else {
		if werr := rep.WriteText(e.stdout); werr != nil {
			return fmt.Errorf("bench: write report: %w", werr)
		}
	}
	if herr := f.out.emit(e, "bench", fmt.Sprintf("interlink bench %s %s", rep.Spec.Mode, addr), &rep); herr != nil {
		return herr
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return benchExit(&rep)
}

// benchExit maps a finished run to its exit: a side's error, an
// interrupted run, then the verdict.
func benchExit(rep *BenchReport) error {
	for _, fl := range rep.Result.Flows {
		for _, sd := range []*traffic.Side{fl.Client, fl.Server} {
			if sd != nil && sd.Error != "" && sd.Error != "cancelled" {
				return fmt.Errorf("bench: %s %s: %s", fl.Direction, sd.Role, sd.Error)
			}
		}
	}
	if rep.Interrupted {
		return withCode(ExitUnknown)
	}
	switch rep.Result.Verdict {
	case traffic.VerdictFailed:
		return withCode(ExitCritical)
	case traffic.VerdictLimited:
		return withCode(ExitWarning)
	}
	return nil
}
