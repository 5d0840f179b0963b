package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// BenchFrom says how the bench pairs run: interlink bench is started on
// the sending node over its SSH connection, with the run's token, and
// dials the receiving node's agent at its interconnect address. So the
// data goes node to node over the interconnect (never through this host
// or an SSH tunnel, which would measure SSH), and the figures are the
// ones `interlink bench` gives when run there by hand.
const BenchFrom = "the sending node over SSH (interlink bench, the run's token), to the receiving node's agent at its interconnect address"

// benchGrace is what a pair may take beyond its --bench-time: connecting,
// the handshake, the bench's own end-of-run grace.
const benchGrace = 20 * time.Second

// Bench is the optional bench of a run: each node to the next one in ring
// order (node order, the last to the first), on each interconnect network,
// one pair at a time so that pairs do not share the switch or the CPU.
type Bench struct {
	Mode  string        `json:"mode"` // blocks, tcp or udp
	Time  time.Duration `json:"time_ns"`
	From  string        `json:"from"`
	Pairs []BenchPair   `json:"pairs"`
	// Skipped says why no pair ran (fewer than two agents, run stopped).
	Skipped string `json:"skipped,omitempty"`
}

// BenchPair is one bench from a node to the next on one network.
type BenchPair struct {
	Network  int        `json:"network"` // 1-based, as in the mesh
	From     string     `json:"from"`
	To       string     `json:"to"`
	FromAddr netip.Addr `json:"from_addr"`
	ToAddr   netip.Addr `json:"to_addr"`
	// Report is interlink bench's own result (interlink.bench/v1), with
	// its verdict and limited_by; Error says why there is none.
	Report  *traffic.Report `json:"report,omitempty"`
	Error   string          `json:"error,omitempty"`
	Elapsed time.Duration   `json:"elapsed_ns"`
}

// Summary is the pair's main flow's summary, nil without a report.
func (p *BenchPair) Summary() *traffic.Summary {
	if p.Report == nil || p.Report.Result == nil || len(p.Report.Flows) == 0 {
		return nil
	}
	return &p.Report.Flows[0].Summary
}

// benchRing runs the bench pairs over the mesh's nodes (those whose agent
// listens), in ring order per network.
func benchRing(ctx context.Context, up []*node, mode string, d time.Duration, port int, progress func(*node, string)) *Bench {
	b := &Bench{Mode: mode, Time: d, From: BenchFrom}
	if len(up) < 2 {
		b.Skipped = fmt.Sprintf("needs agents on at least 2 nodes, %d started", len(up))
		return b
	}
	nets := 0
	for _, n := range up {
		nets = max(nets, len(addrsOf(n)))
	}
	for net := 0; net < nets; net++ {
		for i, from := range up {
			to := up[(i+1)%len(up)]
			fa, ta := addrsOf(from), addrsOf(to)
			if net >= len(fa) || net >= len(ta) {
				continue
			}
			p := BenchPair{Network: net + 1, From: from.res.Name, To: to.res.Name, FromAddr: fa[net], ToAddr: ta[net]}
			if ctx.Err() != nil {
				p.Error = "not run: the run stopped first"
				b.Pairs = append(b.Pairs, p)
				continue
			}
			progress(from, "bench to "+to.res.Name)
			t0 := time.Now()
			p.Report, p.Error = from.bench(ctx, mode, d, netip.AddrPortFrom(ta[net], uint16(port)))
			p.Elapsed = time.Since(t0)
			b.Pairs = append(b.Pairs, p)
		}
	}
	return b
}

// addrsOf is what the mesh probes a node on: its interconnect addresses,
// else the address SSH reached.
func addrsOf(n *node) []netip.Addr {
	if len(n.res.Interconnect) > 0 {
		return n.res.Interconnect
	}
	if ap, err := netip.ParseAddrPort(n.res.Agent); err == nil {
		return []netip.Addr{ap.Addr()}
	}
	return nil
}

// bench runs interlink bench on the node against the agent at peer.
func (n *node) bench(ctx context.Context, mode string, d time.Duration, peer netip.AddrPort) (*traffic.Report, string) {
	ctx, cancel := context.WithTimeout(ctx, d+benchGrace)
	defer cancel()
	args := []string{"bench", net.JoinHostPort(peer.Addr().String(), strconv.Itoa(int(peer.Port()))),
		"--mode", mode, "--time", d.String(), "--token-file", n.dir + "/token", "--json"}
	if mode == string(traffic.ModeBlocks) {
		// The tool's own floor on loopback says nothing about the path.
		args = append(args, "--self-test=false")
	}
	cmd := shq(n.bin)
	for _, a := range args {
		cmd += " " + shq(a)
	}
	out, stderr, code, err := n.run(ctx, cmd, nil)
	if err != nil {
		return nil, fmt.Sprintf("bench: %v", err)
	}
	var rep traffic.Report
	if jerr := json.Unmarshal(out, &rep); jerr != nil || rep.Schema != traffic.Schema || rep.Result == nil {
		return nil, fmt.Sprintf("bench: exit %d without an %s document: %s", code, traffic.Schema, lastLine(stderr))
	}
	if code > 2 {
		return &rep, "bench: " + lastLine(stderr)
	}
	return &rep, ""
}

// writeBench writes the bench pairs as a table.
func writeBench(w io.Writer, b *Bench) {
	fmt.Fprintf(w, "\nbench %s, %s per pair, each node to the next, one pair at a time; run from %s:\n", b.Mode, b.Time, b.From)
	if b.Skipped != "" {
		fmt.Fprintf(w, "  not run: %s\n", b.Skipped)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  FROM\tTO\tNETWORK\tPATH\tVERDICT\tRESULT\tLIMITED BY\n")
	for _, p := range b.Pairs {
		verdict, result, limits := "error", termtext.Clean(oneLine(p.Error)), "-"
		if s := p.Summary(); s != nil {
			verdict, result = p.Report.Verdict, BenchFigures(b.Mode, s)
			var ls []string
			for _, l := range p.Report.LimitedBy {
				ls = append(ls, l.Limit)
			}
			if len(ls) > 0 {
				limits = strings.Join(ls, ", ")
			}
			if p.Error != "" {
				result += "; " + termtext.Clean(oneLine(p.Error))
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s -> %s\t%s\t%s\t%s\n", termtext.Clean(p.From), termtext.Clean(p.To), p.Network, p.FromAddr, p.ToAddr, verdict, result, limits)
	}
	tw.Flush()
	for _, p := range b.Pairs {
		if p.Report == nil {
			continue
		}
		for _, l := range p.Report.LimitedBy {
			fmt.Fprintf(w, "  %s -> %s: limited by %s: %s\n", termtext.Clean(p.From), termtext.Clean(p.To), l.Limit, termtext.Clean(oneLine(l.Detail)))
		}
		for _, pr := range p.Report.Problems {
			fmt.Fprintf(w, "  %s -> %s: %s: %s\n", termtext.Clean(p.From), termtext.Clean(p.To), pr.Problem, termtext.Clean(oneLine(pr.Detail)))
		}
	}
}

// BenchFigures is the one-line result of a pair: blocks/s and round-trip
// percentiles for blocks, the rate for tcp and udp (with loss for udp).
func BenchFigures(mode string, s *traffic.Summary) string {
	switch traffic.Mode(mode) {
	case traffic.ModeBlocks:
		r := fmt.Sprintf("%.0f blocks/s", s.PerSec)
		if s.RTT != nil {
			r += fmt.Sprintf(", RTT p50 %s p99 %s", usec(s.RTT.P50), usec(s.RTT.P99))
		}
		if s.Lost > 0 {
			r += fmt.Sprintf(", %d lost", s.Lost)
		}
		return r
	case traffic.ModeUDP:
		return fmt.Sprintf("%s, loss %.2f%%", units.FormatRate(s.BitsPerSec), s.LossPercent)
	}
	return fmt.Sprintf("%s, %d retransmits", units.FormatRate(s.BitsPerSec), s.Retransmits)
}

func usec(ns int64) string { return fmt.Sprintf("%.0fus", float64(ns)/1e3) }
