package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/units"
)

// GCRun is `interlink bench --mode gc --json` over every node of the demo:
// the agents reached on the public network, the blocks on the
// interconnect, as on a RAC cluster.
type GCRun struct {
	From     string        `json:"from"` // the node the command ran on
	Nodes    []string      `json:"nodes"`
	Time     time.Duration `json:"time_ns"` // its --time
	ExitCode int           `json:"exit_code"`
	Result   *gc.Report    `json:"result"`
	Error    string        `json:"error,omitempty"`
}

// gcTime is how long the Cache Fusion run lasts: long enough for every
// pair through the bad port to lose blocks (each waits out the timeout),
// short beside the other steps.
func gcTime(opt Options) time.Duration { return min(max(opt.Time/2, time.Second), 5*time.Second) }

// gc runs Cache Fusion across every node. Lost blocks make it exit 2: that
// is the finding, not the step's failure.
func (r *run) gc(ctx context.Context) error {
	a, _ := r.pair()
	if a == nil {
		a = &r.nodes[0]
	}
	g := &GCRun{From: a.name, Time: gcTime(r.opt)}
	args := []string{"bench", "--mode", "gc", "--time", g.Time.String(), "--block", fmt.Sprint(r.opt.Block), "--token-file", r.token, "--json"}
	for _, n := range r.nodes {
		args = append(args, fmt.Sprintf("%s=%s@%s", n.name, n.agentAddr, n.ic))
		g.Nodes = append(g.Nodes, n.name)
	}
	r.res.GC = g
	stop := r.ticking(g.Time, "interlink bench --mode gc: Cache Fusion across %d nodes ...", len(r.nodes))
	out, code, err := r.exec(ctx, a, args...)
	stop()
	g.ExitCode = code
	if len(out) > 0 {
		var rep gc.Report
		if jerr := json.Unmarshal(out, &rep); jerr != nil && err == nil {
			err = fmt.Errorf("demo: bench --mode gc: decode its JSON: %w", jerr)
		} else if jerr == nil {
			g.Result = &rep
		}
	}
	if err != nil && ctx.Err() == nil {
		g.Error = err.Error()
		return err
	}
	return nil
}

// GCStory is what the Cache Fusion run says about the bad ports: the
// blocks lost on pairs with a bad node at one end, and on the others.
type GCStory struct {
	Bad                      []string // the nodes the mesh found behind a bad port
	BadLost, BadRequested    int64    // on pairs with a bad node at one end
	GoodLost, GoodReceived   int64    // on the others
	GoodPairs, BadPairs      int
	LostWaits                int64 // AWR's "gc cr block lost" and "gc current block lost", all nodes
	PingsLost8K, PingsLost5H int64 // pings not back, 8 KiB and 500 B
}

// Story reads a Cache Fusion run against the mesh's diagnosis.
func (g *GCRun) Story(d *Diagnosis) GCStory {
	var s GCStory
	bad := map[string]bool{}
	if d != nil {
		for _, p := range d.Ports {
			bad[p.Node] = true
			s.Bad = append(s.Bad, p.Node)
		}
	}
	if g == nil || g.Result == nil {
		return s
	}
	for _, p := range g.Result.Pairs {
		if bad[p.Requester] || bad[p.Server] {
			s.BadPairs++
			s.BadLost += p.Lost
			s.BadRequested += p.Requested
		} else {
			s.GoodPairs++
			s.GoodLost += p.Lost
			s.GoodReceived += p.Received
		}
	}
	for _, n := range g.Result.Nodes {
		for _, e := range n.Events {
			if strings.HasSuffix(e.Event, " lost") {
				s.LostWaits += e.Waits
			}
		}
	}
	for _, p := range g.Result.Pings {
		s.PingsLost5H += p.Small.Lost
		s.PingsLost8K += p.Large.Lost
	}
	return s
}

// Lines tell the story in a few sentences (the text and the HTML report
// both print them); none when no block was lost through a bad port.
func (s GCStory) Lines() []string {
	if len(s.Bad) == 0 || s.BadLost == 0 {
		return nil
	}
	bad := strings.Join(s.Bad, ", ")
	return []string{
		fmt.Sprintf("Every lost block has %s at one end: %d of the %d blocks its %d pairs were to carry were lost; the %d other pairs lost %d and moved only %d blocks: their requesters spent the run waiting out the blocks lost through the bad port, as a RAC session waits on \"gc cr block lost\".",
			bad, s.BadLost, s.BadRequested, s.BadPairs, s.GoodPairs, s.GoodLost, s.GoodReceived),
		fmt.Sprintf("In AWR: %d waits on \"gc cr block lost\" and \"gc current block lost\" across the instances; in its Interconnect Ping Latency Stats, the 8 KiB pings to and from %s lost (%d), the 500 B ones not (%d lost).",
			s.LostWaits, bad, s.PingsLost8K, s.PingsLost5H),
	}
}

func renderGC(w io.Writer, r *Result) {
	g := r.GC
	if g == nil {
		return
	}
	title(w, 5, "What the database feels: interlink bench --mode gc, Cache Fusion across %s, %s", strings.Join(g.Nodes, ", "), g.Time)
	if g.Result == nil {
		fmt.Fprintf(w, "  not measured: %s\n", g.Error)
		return
	}
	rep := g.Result
	fmt.Fprintln(w, wrap(fmt.Sprintf("Every node requests, masters and ships %s blocks at once (2-way and 3-way transfers, as RAC's LMS processes do); a block not whole within %v is lost.",
		units.FormatBytes(float64(rep.Spec.Block)), rep.Spec.Timeout), "  ", "  ", 104))
	cells := [][]string{{"requester <- server", "requested", "received", "lost", "2-way p50"}}
	for _, p := range rep.Pairs {
		p50 := "-"
		if p.TwoWay != nil {
			p50 = usec(float64(p.TwoWay.P50))
		}
		cells = append(cells, []string{p.Requester + " <- " + p.Server, fmt.Sprint(p.Requested), fmt.Sprint(p.Received), fmt.Sprint(p.Lost), p50})
	}
	grid(w, cells)
	if lines := g.Story(r.Diagnosis).Lines(); len(lines) > 0 {
		for _, l := range lines {
			fmt.Fprintln(w, wrap(l, "  ", "  ", 104))
		}
	} else {
		fmt.Fprintf(w, "  %d blocks/s, %d lost; verdict %s.\n", int64(rep.Total.BlocksPerSec), rep.Total.Lost, rep.Verdict)
	}
	if g.Error != "" {
		fmt.Fprintf(w, "  %s\n", g.Error)
	}
}
