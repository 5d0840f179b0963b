package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/termtext"
)

// BenchGC is the --bench value that runs the cluster-wide Cache Fusion
// workload (see GC) instead of the ring of pairs.
const BenchGC = "gc"

// gcGrace is what the gc run may take beyond its --bench-time: the
// agents' handshakes, setting the run up and connecting every pair (each
// request bounded at 10 s), waiting out the last blocks, collecting.
const gcGrace = 40 * time.Second

// GC is the optional `interlink bench --mode gc` of a run (--bench gc):
// one workload over every node whose agent listens, all at once, started
// on the first of them over its SSH connection with the run's token. That
// command only sets up, starts and collects; the blocks go agent to agent
// over UDP on each node's address on one interconnect network.
type GC struct {
	Time time.Duration `json:"time_ns"`
	// Node is the node the command ran on; From says how.
	Node string `json:"node"`
	From string `json:"from"`
	// Network is the interconnect network the blocks crossed (1-based, as
	// in the mesh: each node's first interconnect address, else the
	// address SSH reached); Addrs each node's address on it.
	Network int               `json:"network"`
	Addrs   map[string]string `json:"addrs"`
	// NotRun names the nodes of the run that took no part because their
	// agent never started (unreachable, failed); the gc report's own
	// Unreachable names those whose agent it could not use.
	NotRun []string `json:"not_run,omitempty"`
	// Report is the command's own result (interlink.gc/v1); Error says
	// why there is none, or what went wrong beside it.
	Report  *gc.Report    `json:"report,omitempty"`
	Error   string        `json:"error,omitempty"`
	Skipped string        `json:"skipped,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// GCFrom says where the gc workload is started from.
const GCFrom = "over SSH (interlink bench --mode gc, the run's token), which only sets up, starts and collects: the blocks go agent to agent"

// benchGC runs the gc workload over the nodes whose agent listens, from the
// first of them; all lists every node of the run, for naming those left out.
func benchGC(ctx context.Context, all, up []*node, d time.Duration, progress func(*node, string)) *GC {
	g := &GC{Time: d, From: GCFrom, Network: 1, Addrs: map[string]string{}}
	in := map[*node]bool{}
	for _, n := range up {
		in[n] = true
	}
	for _, n := range all {
		if !in[n] {
			why := n.res.Status
			if n.res.Cause != "" {
				why += " (" + n.res.Cause + ")"
			}
			if why == "" {
				why = "no agent"
			}
			g.NotRun = append(g.NotRun, n.res.Name+": "+why)
		}
	}
	if len(up) < 2 {
		g.Skipped = fmt.Sprintf("needs agents on at least 2 nodes, %d started", len(up))
		return g
	}
	if ctx.Err() != nil {
		g.Skipped = "the run stopped first"
		return g
	}
	from := up[0]
	g.Node = from.res.Name
	args := []string{"bench", "--mode", "gc", "--time", d.String(), "--token-file", from.dir + "/token", "--json"}
	for _, n := range up {
		addrs := addrsOf(n)
		if len(addrs) == 0 {
			g.NotRun = append(g.NotRun, n.res.Name+": no address")
			continue
		}
		g.Addrs[n.res.Name] = addrs[0].String()
		// The agent at the address SSH reached (as the mesh reaches it),
		// the blocks on the interconnect.
		args = append(args, n.res.Name+"="+n.res.Agent+"@"+addrs[0].String())
	}
	progress(from, "bench gc")
	t0 := time.Now()
	g.Report, g.Error = from.benchGC(ctx, d, args)
	g.Elapsed = time.Since(t0)
	return g
}

// benchGC runs interlink bench --mode gc with args on the node.
func (n *node) benchGC(ctx context.Context, d time.Duration, args []string) (*gc.Report, string) {
	ctx, cancel := context.WithTimeout(ctx, d+gcGrace)
	defer cancel()
	cmd := shq(n.bin)
	for _, a := range args {
		cmd += " " + shq(a)
	}
	out, stderr, code, err := n.run(ctx, cmd, nil)
	if err != nil {
		return nil, fmt.Sprintf("bench --mode gc: %v", err)
	}
	var rep gc.Report
	if jerr := json.Unmarshal(out, &rep); jerr != nil || rep.Schema != gc.Schema {
		return nil, fmt.Sprintf("bench --mode gc: exit %d without an %s document: %s", code, gc.Schema, lastLine(stderr))
	}
	if code > 2 && len(rep.Unreachable) == 0 && !rep.Interrupted {
		return &rep, "bench --mode gc: " + lastLine(stderr)
	}
	return &rep, ""
}

// writeGC writes the gc run's summary: totals, each pair's blocks/s,
// 2-way and 3-way median receive time and lost blocks, the pairs that
// lost blocks named, and AWR's ping table.
func writeGC(w io.Writer, g *GC) {
	fmt.Fprintf(w, "\nbench gc, %s, every node at once on interconnect network %d; run from %s %s:\n", g.Time, g.Network, termtext.Clean(orDash(g.Node)), g.From)
	for _, s := range g.NotRun {
		fmt.Fprintf(w, "  not in the run: %s\n", termtext.Clean(s))
	}
	if g.Skipped != "" {
		fmt.Fprintf(w, "  not run: %s\n", g.Skipped)
		return
	}
	r := g.Report
	if r == nil {
		fmt.Fprintf(w, "  error: %s\n", termtext.Clean(oneLine(g.Error)))
		return
	}
	t := r.Total
	fmt.Fprintf(w, "  %.0f blocks/s received in all, 2-way p50 %s, 3-way p50 %s (%.1f %% of blocks); %d requested, %d lost\n",
		t.BlocksPerSec, p50ms(t.TwoWay), p50ms(t.ThreeWay), t.ThreeWayPercent, t.Requested, t.Lost)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  REQUESTER\tSERVER\tPATH\tBLOCKS/S\t2-WAY P50\t3-WAY P50\tLOST\n")
	var lost []string
	for _, p := range r.Pairs {
		fmt.Fprintf(tw, "  %s\t%s\t%s <- %s\t%.0f\t%s\t%s\t%d of %d\n", termtext.Clean(p.Requester), termtext.Clean(p.Server),
			termtext.Clean(orDash(g.Addrs[p.Requester])), termtext.Clean(orDash(g.Addrs[p.Server])), p.BlocksPerSec, p50ms(p.TwoWay), p50ms(p.ThreeWay), p.Lost, p.Requested)
		if p.Lost > 0 {
			lost = append(lost, fmt.Sprintf("%s <- %s (%d)", p.Requester, p.Server, p.Lost))
		}
	}
	tw.Flush()
	if len(lost) > 0 {
		fmt.Fprintf(w, "  pairs that lost blocks: %s\n", termtext.Clean(strings.Join(lost, ", ")))
	}
	if len(r.Pings) > 0 {
		fmt.Fprintf(w, "  Interconnect Ping Latency Stats (AWR form; ms):\n")
		gc.WritePings(w, "  ", r.Pings)
	}
	for _, u := range r.Unreachable {
		fmt.Fprintf(w, "  UNREACHABLE: %s (%s): %s\n", termtext.Clean(u.Node), termtext.Clean(u.Agent), termtext.Clean(u.Cause))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %s: %s\n", p.Problem, termtext.Clean(oneLine(p.Detail)))
	}
	if g.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", termtext.Clean(oneLine(g.Error)))
	}
	fmt.Fprintf(w, "  verdict: %s\n", r.Verdict)
}

// p50ms is a receive time's median in ms, "-" without one.
func p50ms(l *latency.Summary) string {
	if l == nil || l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", float64(l.P50)/1e6)
}
