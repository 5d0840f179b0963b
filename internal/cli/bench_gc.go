package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/units"
)

// GCReport is the result of `interlink bench --mode gc`, owned by package gc.
type GCReport = gc.Report

// gcFlags are the flags only --mode gc reads.
type gcFlags struct {
	nodes, skew  string
	blocks       int
	currentShare float64
	pingInterval time.Duration
}

func (g *gcFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.nodes, "nodes", "", "gc: file listing the nodes: NAME AGENT[:PORT] [ADDR] per line")
	f.IntVar(&g.blocks, "blocks", gc.DefaultBlocks, "gc: working set, in blocks")
	f.StringVar(&g.skew, "skew", "uniform", "gc: how the working set is asked: uniform, zipf, or a zipf exponent (0 to 4)")
	f.Float64Var(&g.currentShare, "current-share", gc.DefaultCurrentShare, "gc: share of requests in current mode (they move ownership)")
	f.DurationVar(&g.pingInterval, "ping-interval", gc.DefaultPingInterval, "gc: 500 B and 8 KiB pings to every node this often (0: none)")
}

// gcOnly are flags that mean nothing outside --mode gc; gcIgnores those
// that mean nothing in it.
var (
	gcOnly    = []string{"nodes", "blocks", "skew", "current-share", "ping-interval"}
	gcIgnores = []string{"len", "parallel", "reverse", "bidir", "cpu", "peer-cpu", "link-rate", "link-overhead", "interval", "self-test"}
)

// checkGCFlags refuses gc's flags outside --mode gc, and the others in it.
func checkGCFlags(f *pflag.FlagSet, mode string) error {
	if mode != "gc" {
		for _, name := range gcOnly {
			if f.Changed(name) {
				return usageError("bench: --%s does nothing in --mode %s (it is for --mode gc)", name, mode)
			}
		}
		return nil
	}
	for _, name := range gcIgnores {
		if f.Changed(name) {
			return usageError("bench: --%s does nothing in --mode gc", name)
		}
	}
	return nil
}

// gcArgs are the values runGC reads from bench's own flags.
type gcArgs struct {
	tokenFile, request, block, rate string
	dur, timeout                    time.Duration
	outstanding                     int
	asJSON, split                   bool
	out                             outputFlags
	cpuLatency                      *int32 // --cpu-latency; nil: not held
}

func parseSkew(s string) (float64, error) {
	switch s {
	case "uniform":
		return 0, nil
	case "zipf":
		return 1, nil
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(s, "zipf:"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want uniform, zipf or a zipf exponent such as 1.2", s)
	}
	return v, nil
}

// gcNodes reads the nodes from --nodes or the arguments.
func gcNodes(file string, args []string) ([]mesh.Node, error) {
	nodes, err := readNodes(file, args, nodeMessages{cmd: "bench", both: "give the nodes either with --nodes or as arguments, not both",
		argsCheck: func(nodes []mesh.Node) error {
			if len(nodes) < 2 { // said for gc, before mesh.Check says it for a mesh
				return usageError("bench: --mode gc needs at least 2 nodes (NODE NODE... or --nodes FILE), got %d", len(nodes))
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	if len(nodes) > gc.MaxNodes {
		return nil, usageError("bench: %d nodes: --mode gc takes at most %d", len(nodes), gc.MaxNodes)
	}
	return nodes, nil
}

// runGC runs `bench --mode gc`: the cluster-wide Cache Fusion workload.
func runGC(e *env, cmd *cobra.Command, args []string, a gcArgs, g gcFlags) error {
	if err := checkGCFlags(cmd.Flags(), "gc"); err != nil {
		return err
	}
	if a.tokenFile == "" {
		return usageError("bench: --token-file FILE is required (the agents' shared token)")
	}
	spec, err := gcSpec(a, g)
	if err != nil {
		return err
	}
	nodes, err := gcNodes(g.nodes, args)
	if err != nil {
		return err
	}
	if err := fenceNodes(e, "bench", nodes); err != nil {
		return err
	}
	if err := a.out.check("bench"); err != nil {
		return err
	}
	tok, err := agent.ReadToken(a.tokenFile)
	if err != nil {
		return usageError("bench: %v", trimToken(err))
	}
	opt := gc.Options{Token: tok, Software: "interlink " + buildVersion().Version}
	var prog *progressLine
	if showProgress(e, a.asJSON) {
		prog = &progressLine{w: e.stderr, every: 200 * time.Millisecond}
		opt.Progress = func(s string) { prog.show("gc: " + s) }
	}
	var hold *cpuHold
	if a.cpuLatency != nil {
		hold = holdOnAgents(e.ctx, *a.cpuLatency, gcAgentAddrs(nodes), tok)
		defer hold.release()
	}
	rep, err := gc.Run(e.ctx, nodes, spec, opt)
	hold.release()
	prog.clear()
	if err != nil {
		if errors.Is(err, gc.ErrAuth) {
			return usageError("bench: %v", err)
		}
		return fmt.Errorf("bench: %w", err)
	}
	rep.CPULatency = hold.report()
	return printGC(e, a, spec, rep)
}

// gcAgentAddrs are the nodes' agent addresses, each once.
func gcAgentAddrs(nodes []mesh.Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		if !seen[n.Agent] {
			seen[n.Agent] = true
			out = append(out, n.Agent)
		}
	}
	return out
}

// gcSpec checks gc's numbers, rate, skew and sizes into a normalized spec.
func gcSpec(a gcArgs, g gcFlags) (gc.Spec, error) {
	spec := gc.Spec{Duration: a.dur, Blocks: g.blocks, Outstanding: a.outstanding, Timeout: a.timeout,
		CurrentShare: g.currentShare, CurrentSet: true, PingInterval: g.pingInterval, NoPing: g.pingInterval == 0, NoSplit: !a.split}
	if spec.NoPing {
		spec.PingInterval = gc.DefaultPingInterval
	}
	// Name the one flag that is wrong, not three candidates.
	for _, c := range []struct {
		name string
		bad  bool
		val  any
	}{{"time", a.dur <= 0, a.dur}, {"blocks", g.blocks <= 0, g.blocks}, {"outstanding", a.outstanding <= 0, a.outstanding}} {
		if c.bad {
			return spec, usageError("bench: --%s %v: want more than 0", c.name, c.val)
		}
	}
	var err error
	if a.rate != "" {
		if spec.RatePerSec, err = requestRate(a.rate, "gc", "requests per second per node", gc.MaxRate); err != nil {
			return spec, err
		}
	}
	if spec.Skew, err = parseSkew(g.skew); err != nil {
		return spec, usageError("bench: --skew %v", err)
	}
	for _, s := range []struct {
		flag, val string
		dst       *int
	}{{"--request", a.request, &spec.Request}, {"--block", a.block, &spec.Block}} {
		if s.val == "" {
			continue
		}
		n, err := units.ParseSize(s.val)
		if err != nil {
			return spec, usageError("bench: %s: %v", s.flag, err)
		}
		if n <= 0 || n > 1<<30 {
			return spec, usageError("bench: %s %s: want 1 byte to 1 MiB", s.flag, s.val)
		}
		*s.dst = int(n)
	}
	if spec, err = spec.Normalize(); err != nil {
		return spec, usageError("bench: %v", strings.TrimPrefix(err.Error(), gc.ErrSpec.Error()+": "))
	}
	return spec, nil
}

// printGC prints the gc report and maps its verdict to the exit code.
func printGC(e *env, a gcArgs, spec gc.Spec, rep *gc.Report) error {
	if a.asJSON {
		if err := report.JSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		if err := gc.WriteHeader(e.stdout, spec, len(rep.Nodes)); err != nil {
			return fmt.Errorf("bench: write the report: %w", err)
		}
		if rep.CPULatency != nil {
			rep.CPULatency.WriteText(e.stdout)
		}
		if err := rep.WriteText(e.stdout); err != nil {
			return fmt.Errorf("bench: write the report: %w", err)
		}
	}
	if err := a.out.emit(e, "bench", fmt.Sprintf("interlink bench --mode gc: %d nodes", len(rep.Nodes)), rep); err != nil {
		return err
	}
	switch {
	case rep.Verdict == gc.VerdictFailed:
		return withCode(ExitCritical)
	case len(rep.Unreachable) > 0 || rep.Interrupted:
		return withCode(ExitUnknown)
	case rep.Verdict != gc.VerdictOK:
		return withCode(ExitWarning)
	}
	return nil
}
