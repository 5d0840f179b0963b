package cli

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
	"github.com/interlink/interlink/internal/wire"
)

func init() { commands = append(commands, newBenchCmd) }

// BenchReport is the result of `interlink bench`, owned by package traffic.
type BenchReport = traffic.Report

func newBenchCmd(e *env) *cobra.Command {
	var (
		mode, tokenFile, length, rate, request, block, linkRate string
		dur, interval, timeout                                  time.Duration
		parallel, outstanding, cpu, peerCPU, overhead           int
		reverse, bidir, asJSON                                  bool
		out                                                     outputFlags
	)
	c := &cobra.Command{
		Use:   "bench PEER --mode tcp|udp|blocks --token-file FILE",
		Short: "Measure what the interconnect delivers to an agent: TCP, paced UDP, 8 KiB blocks",
		Long: `Measure the path to PEER, where 'interlink agent' runs, with the traffic a cluster
sends, and what it costs at both ends:

  tcp     one or more streams (--parallel), --len write size, --reverse, --bidir;
          retransmits and RTT per stream from TCP_INFO
  udp     datagrams of --len bytes (may exceed the MTU: fragmentation is the point),
          paced to --rate (default 1gbit; 0 = unpaced); loss, reordering,
          duplicates and RFC 3550 jitter from sequence numbers
  blocks  Cache Fusion: a --request answered by a --block (8K; up to 1M, split into
          datagrams above 64 KiB), --outstanding in flight; blocks/s and round-trip
          p50/p90/p99/p99.9/max; a block not whole within --timeout is lost

Every result carries, for both ends: CPU (user and system of the test's threads,
host softirq) per GiB and per block, IP packets and fragments per message and
reassembly counters from the kernel, loss split by where it happened (sender
queue, network, receiver socket buffer, reassembly), and goodput as a share of
the wire limit for the path MTU when the link rate is known.`,
		Args: exactArgs(1, "a PEER (host or host:port of an interlink agent)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := traffic.Spec{Mode: traffic.Mode(mode), Duration: dur, Interval: interval, Parallel: parallel,
				Reverse: reverse, Bidir: bidir, Outstanding: outstanding, BlockTimeout: timeout, LinkOverheadBytes: overhead}
			if mode != "tcp" && mode != "udp" && mode != "blocks" {
				return usageError("bench: --mode %q: want tcp, udp or blocks", mode)
			}
			if tokenFile == "" {
				return usageError("bench: --token-file FILE is required (the agent's shared token)")
			}
			if dur <= 0 || dur > traffic.MaxDuration {
				return usageError("bench: --time %v: want more than 0 and at most %v", dur, traffic.MaxDuration)
			}
			if bidir && mode != "tcp" || reverse && mode == "blocks" {
				return usageError("bench: --bidir is for tcp and --reverse for tcp and udp")
			}
			sizes := []struct {
				flag, val string
				dst       *int
			}{{"--len", length, &spec.Len}, {"--request", request, &spec.Request}, {"--block", block, &spec.Block}}
			for _, s := range sizes {
				if s.val == "" {
					continue
				}
				n, err := units.ParseSize(s.val)
				if err != nil {
					return usageError("bench: %s: %v", s.flag, err)
				}
				if n <= 0 {
					return usageError("bench: %s %s: want a positive size (leave the flag out for the default)", s.flag, s.val)
				}
				if n > 1<<30 {
					return usageError("bench: %s %s: too large", s.flag, s.val)
				}
				*s.dst = int(n)
			}
			if rate != "" {
				r, err := units.ParseRate(rate)
				if err != nil {
					return usageError("bench: --rate: %v", err)
				}
				spec.RateBitsPerSec, spec.RateSet = r, true
			}
			// Zero and negative counts are errors, not defaults; every flag
			// is checked before anything connects.
			if parallel < 1 || outstanding < 1 {
				return usageError("bench: --parallel and --outstanding want 1 or more (got %d and %d)", parallel, outstanding)
			}
			if overhead < 0 || overhead > 1000 {
				return usageError("bench: --link-overhead %d: want 0 to 1000 bytes per packet (38 for Ethernet)", overhead)
			}
			if cmd.Flags().Changed("cpu") && (cpu < 0 || cpu >= runtime.NumCPU()) {
				return usageError("bench: --cpu %d: this node has CPUs 0 to %d", cpu, runtime.NumCPU()-1)
			}
			if cmd.Flags().Changed("peer-cpu") && peerCPU < 0 {
				return usageError("bench: --peer-cpu %d: want a CPU number (0 or more)", peerCPU)
			}
			if cpu >= 0 {
				spec.CPU = &cpu
			}
			if peerCPU >= 0 {
				spec.PeerCPU = &peerCPU
			}
			if linkRate != "auto" {
				r, err := units.ParseRate(linkRate)
				if err != nil {
					return usageError("bench: --link-rate: %v", err)
				}
				spec.LinkRateBitsPerSec = r
			}
			norm, err := spec.Normalize()
			if err != nil {
				return usageError("bench: %v", strings.TrimPrefix(err.Error(), traffic.ErrSpec.Error()+": "))
			}
			// Every datagram of a session carries the session's tagged header
			// before the engine's own.
			if minLen := wire.HeaderLen + traffic.HeaderLen; norm.Mode == traffic.ModeUDP && norm.Len < minLen ||
				norm.Mode == traffic.ModeBlocks && min(norm.Request, norm.Block) < minLen {
				return usageError("bench: datagrams must hold at least %d bytes (the session's and the test's headers)", minLen)
			}
			if err := out.check("bench"); err != nil {
				return err
			}
			tok, err := agent.ReadToken(tokenFile)
			if err != nil {
				return usageError("bench: %v", err)
			}
			addr, err := agent.HostPort(args[0])
			if err != nil {
				return usageError("bench: PEER %q: %v", args[0], err)
			}
			client, err := agent.Dial(e.ctx, addr, tok, agent.DialOptions{Software: "interlink " + buildVersion().Version})
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			defer client.Close()
			if linkRate == "auto" {
				spec.LinkRateBitsPerSec = traffic.LinkRate(client.LocalAddr().Addr())
			}
			var mu sync.Mutex
			// The header waits for the first result, so that a run the
			// agent refuses (--peer-cpu it cannot honour) prints one line.
			header := sync.OnceFunc(func() {
				if !asJSON {
					writeBenchHeader(e.stdout, addr, client.Agent, spec)
					if lim := client.Limits.MaxRateBitsPerSec; lim > 0 && (spec.Mode == "blocks" || reverse || bidir) {
						fmt.Fprintf(e.stdout, "note: the agent sends at most %s in this session (its --max-rate)\n", units.FormatRate(lim))
					}
				}
			})
			obs := func(d traffic.Direction, r traffic.Role, in traffic.Interval) {
				if asJSON {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				header()
				writeInterval(e.stdout, spec.Mode, d, r, in)
			}
			res, err := traffic.RunRemote(e.ctx, client, spec, obs)
			if res == nil {
				return fmt.Errorf("bench: %w", err)
			}
			header()
			rep := BenchReport{Schema: traffic.Schema, Peer: addr, Agent: client.Agent, Result: res, Interrupted: e.ctx.Err() != nil}
			if asJSON {
				if jerr := report.JSON(e.stdout, rep); jerr != nil {
					return jerr
				}
			} else {
				writeBenchSummary(e.stdout, rep)
			}
			if herr := out.emit(e, "bench", fmt.Sprintf("interlink bench %s %s", rep.Spec.Mode, addr), &rep); herr != nil {
				return herr
			}
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			for _, f := range res.Flows {
				for _, sd := range []*traffic.Side{f.Client, f.Server} {
					if sd != nil && sd.Error != "" && sd.Error != "cancelled" {
						return fmt.Errorf("bench: %s %s: %s", f.Direction, sd.Role, sd.Error)
					}
				}
			}
			if rep.Interrupted {
				return withCode(ExitUnknown)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&mode, "mode", "tcp", "tcp, udp or blocks")
	f.StringVar(&tokenFile, "token-file", "", "file holding the agent's shared token")
	f.DurationVar(&dur, "time", 10*time.Second, "how long to send (at most 1h)")
	f.DurationVar(&interval, "interval", time.Second, "per-interval lines every (at least 100ms)")
	f.IntVar(&parallel, "parallel", 1, "tcp: streams")
	f.StringVar(&length, "len", "", "tcp write size (default 128K) or udp datagram size (default 8K, may exceed the MTU)")
	f.BoolVar(&reverse, "reverse", false, "tcp, udp: the peer sends")
	f.BoolVar(&bidir, "bidir", false, "tcp: both directions at once")
	f.StringVar(&rate, "rate", "", "udp: payload rate (default 1gbit; 0 = unpaced)")
	f.StringVar(&request, "request", "", "blocks: request size (default 256)")
	f.StringVar(&block, "block", "", "blocks: block size (default 8K, at most 1M)")
	f.IntVar(&outstanding, "outstanding", 1, "blocks: requests in flight")
	f.DurationVar(&timeout, "timeout", 500*time.Millisecond, "blocks: a block not whole by then is lost")
	f.IntVar(&cpu, "cpu", -1, "pin this end's test threads to a CPU")
	f.IntVar(&peerCPU, "peer-cpu", -1, "pin the agent's test threads to a CPU")
	f.StringVar(&linkRate, "link-rate", "auto", "line rate for the wire limit (auto: sysfs speed; 0: unknown)")
	f.IntVar(&overhead, "link-overhead", traffic.EthernetOverhead, "bytes per packet the link rate counts beyond IP (38 Ethernet, 14 for a tbf shaper)")
	f.BoolVar(&asJSON, "json", false, "print JSON (schema interlink.bench/v1)")
	out.add(f)
	return c
}

func writeBenchHeader(w io.Writer, peer, agentVersion string, spec traffic.Spec) {
	s, _ := spec.Normalize()
	var what string
	switch s.Mode {
	case traffic.ModeTCP:
		what = fmt.Sprintf("%d stream(s), %s writes", s.Parallel, units.FormatBytes(float64(s.Len)))
	case traffic.ModeUDP:
		pace := "unpaced"
		if s.Paced() {
			pace = "paced to " + units.FormatRate(float64(s.RateBitsPerSec))
		}
		what = fmt.Sprintf("%s datagrams, %s", units.FormatBytes(float64(s.Len)), pace)
	case traffic.ModeBlocks:
		what = fmt.Sprintf("%d B requests, %s blocks, %d outstanding", s.Request, units.FormatBytes(float64(s.Block)), s.Outstanding)
	}
	fmt.Fprintf(w, "interlink bench %s (%s): %s, %s, %v\n", peer, agentVersion, s.Mode, what, s.Duration)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func us(ns int64) string { return fmt.Sprintf("%.1f us", float64(ns)/1e3) }

func writeInterval(w io.Writer, mode traffic.Mode, d traffic.Direction, r traffic.Role, in traffic.Interval) {
	tag := "fwd"
	if d == traffic.Reverse {
		tag = "rev"
	}
	line := fmt.Sprintf("[%s] %6s-%-6s sec  %10s  %12s", tag, secs(in.Start), secs(in.End),
		units.FormatBytes(float64(in.Bytes)), units.FormatRate(in.BitsPerSec))
	switch {
	case mode == traffic.ModeTCP && r == traffic.RoleSender:
		line += fmt.Sprintf("  retr %d  rtt %s  cwnd %s", in.Retransmits, us(in.RTT), units.FormatBytes(float64(in.CwndBytes)))
	case mode == traffic.ModeUDP && r == traffic.RoleReceiver:
		line += fmt.Sprintf("  %d datagrams, lost %d, reordered %d, jitter %s", in.Messages, in.Lost, in.Reordered, us(in.Jitter))
	case mode == traffic.ModeUDP:
		line += fmt.Sprintf("  %d datagrams sent", in.Messages)
	case mode == traffic.ModeBlocks:
		line += fmt.Sprintf("  %d blocks", in.Messages)
		if p := in.RTTPercentiles; p != nil {
			line += fmt.Sprintf("  p50 %s  p99 %s  max %s", us(p.P50), us(p.P99), us(p.Max))
		}
		if in.LostBlocks > 0 {
			line += fmt.Sprintf("  lost %d", in.LostBlocks)
		}
	}
	fmt.Fprintln(w, line)
}

func writeBenchSummary(w io.Writer, rep BenchReport) {
	// The agent's lines, when they hold what this end could not see live:
	// a UDP receiver's loss and jitter, a TCP sender's retransmits.
	for _, f := range rep.Flows {
		if sd := f.Server; sd != nil && len(sd.Intervals) > 0 &&
			(rep.Spec.Mode == traffic.ModeUDP && sd.Role == traffic.RoleReceiver || rep.Spec.Mode == traffic.ModeTCP && sd.Role == traffic.RoleSender) {
			fmt.Fprintf(w, "agent (%s):\n", sd.Role)
			for _, in := range sd.Intervals {
				writeInterval(w, rep.Spec.Mode, f.Direction, sd.Role, in)
			}
		}
	}
	fmt.Fprintln(w, strings.Repeat("- ", 40))
	for _, f := range rep.Flows {
		s := f.Summary
		fmt.Fprintf(w, "%s: %s in %s sec = %s", f.Direction, units.FormatBytes(float64(s.Bytes)), secs(s.Duration), units.FormatRate(s.BitsPerSec))
		if s.MTU > 0 {
			fmt.Fprintf(w, ", path MTU %d", s.MTU)
		}
		if s.WireLimitBitsPerSec > 0 {
			fmt.Fprintf(w, ", %.1f %% of the %s wire limit", s.PercentOfWireLimit, units.FormatRate(s.WireLimitBitsPerSec))
		}
		fmt.Fprintln(w)
		switch rep.Spec.Mode {
		case traffic.ModeTCP:
			fmt.Fprintf(w, "  retransmits %d", s.Retransmits)
			if snd := sender(f); snd != nil {
				for i, st := range snd.Streams {
					fmt.Fprintf(w, "; stream %d: %s, rtt %s (min %s), mss %d", i, units.FormatBytes(float64(st.Bytes)), us(st.RTT), us(st.MinRTT), st.MSS)
				}
			}
			fmt.Fprintln(w)
		case traffic.ModeUDP:
			fmt.Fprintf(w, "  datagrams: sent %d, delivered %d, lost %d (%.3f %%), reordered %d, duplicates %d, jitter %s\n",
				s.Sent, s.Messages, s.Lost, s.LossPercent, s.Reordered, s.Duplicates, us(s.Jitter))
		case traffic.ModeBlocks:
			fmt.Fprintf(w, "  blocks: %d = %.0f blocks/s, lost %d (%.3f %%)", s.Messages, s.PerSec, s.Lost, s.LossPercent)
			if s.Chunks > 1 {
				fmt.Fprintf(w, ", each block split into %d datagrams (a UDP datagram holds at most 64 KiB)", s.Chunks)
			}
			fmt.Fprintln(w)
			if p := s.RTT; p != nil {
				fmt.Fprintf(w, "  round trip: min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
					us(p.Min), us(p.P50), us(p.P90), us(p.P99), us(p.P999), us(p.Max))
			}
		}
		if s.LossBy != nil && s.Lost > 0 {
			fmt.Fprintf(w, "  lost where: sender queue %d, network %d, receiver socket buffer %d, reassembly %d\n",
				s.LossBy.SenderQueue, s.LossBy.Network, s.LossBy.SocketBuffer, s.LossBy.Reassembly)
		}
		if rep.Spec.Mode != traffic.ModeTCP {
			fmt.Fprintf(w, "  packets: %.2f fragments per message (1 = not fragmented), %.2f packets per message both ways; reassembly %d fragments -> %d OK, %d failed\n",
				s.FragmentsPerMessage, s.PacketsPerMessage, s.ReasmReqds, s.ReasmOKs, s.ReasmFails)
		}
		for _, e := range []struct {
			name string
			c    traffic.Cost
			sd   *traffic.Side
		}{{"client", s.ClientCost, f.Client}, {"agent ", s.ServerCost, f.Server}} {
			if e.sd == nil {
				continue
			}
			fmt.Fprintf(w, "  cpu %s %-9s user %s ms, sys %s ms (%.0f %% of a core), host softirq %s ms; per GiB %.0f ms cpu",
				e.name, e.sd.Role, ms(e.sd.CPU.UserNs), ms(e.sd.CPU.SystemNs), 100*e.c.Utilisation, ms(e.sd.CPU.SoftIRQNs), e.c.CPUNsPerGiB/1e6)
			if e.c.CPUNsPerMsg > 0 {
				fmt.Fprintf(w, "; per message %.1f us cpu, %.1f us softirq", e.c.CPUNsPerMsg/1e3, e.c.SoftIRQNsPerMsg/1e3)
			}
			fmt.Fprintln(w)
		}
	}
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: the figures cover the time until then")
	}
}

func ms(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e6) }

func sender(f traffic.Flow) *traffic.Side {
	for _, sd := range []*traffic.Side{f.Client, f.Server} {
		if sd != nil && sd.Role == traffic.RoleSender {
			return sd
		}
	}
	return nil
}
