package demo

// The demo's measuring steps: each runs an interlink command inside the
// lab's nodes with --json and keeps its result (run.go builds the lab,
// starts the agents and runs the commands; gc.go is the Cache Fusion step).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// check audits every node with `interlink check --json --interconnect IF`.
func (r *run) check(ctx context.Context) error {
	for i := range r.nodes {
		n := &r.nodes[i]
		r.progress("interlink check on %s ...", n.name)
		out, code, err := r.exec(ctx, n, "check", "--json", "--interconnect", n.icIf)
		nc := NodeCheck{Node: n.name, Interconnect: n.icIf, ExitCode: code}
		if err == nil {
			var res rules.Result
			if jerr := json.Unmarshal(out, &res); jerr != nil {
				err = fmt.Errorf("demo: check on %s: decode its JSON: %w", n.name, jerr)
			} else {
				nc.Result = &res
			}
		}
		if err != nil {
			nc.Error = err.Error()
		}
		r.res.Checks = append(r.res.Checks, nc)
		if err != nil {
			return err
		}
	}
	return nil
}

// mesh proves every interconnect path with `interlink mesh --expect 9000`,
// run in the first node, agents reached on their public addresses.
func (r *run) mesh(ctx context.Context) error {
	args := []string{"mesh", "--json", "--token-file", r.token, "--expect", fmt.Sprint(ExpectMTU)}
	for _, n := range r.nodes {
		args = append(args, fmt.Sprintf("%s=%s@%s", n.name, n.agentAddr, n.ic))
	}
	stop := r.ticking(0, "interlink mesh --expect %d: %d nodes, %d paths ...", ExpectMTU, len(r.nodes), len(r.nodes)*(len(r.nodes)-1))
	out, _, err := r.exec(ctx, &r.nodes[0], args...)
	stop()
	if err != nil {
		return err
	}
	var res mesh.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("demo: mesh: decode its JSON: %w", err)
	}
	r.res.Mesh = &res
	r.res.Diagnosis = r.diagnose(&res)
	return nil
}

// bench runs `interlink bench --json` from one node to an address of
// another and decodes the result.
func (r *run) bench(ctx context.Context, label, mode string, from, to *nodeAddrs, public bool, d time.Duration, extra ...string) Bench {
	b := Bench{Label: label, From: from.name, To: to.name, Interface: from.icIf, Address: to.ic.String(), LinkMTU: from.icMTU}
	if public {
		b.Interface, b.Address, b.LinkMTU = from.pubIf, to.pub.String(), from.pubMTU
	}
	args := append([]string{"bench", b.Address, "--mode", mode, "--time", d.String(), "--interval", d.String(),
		"--token-file", r.token, "--link-rate", "0", "--json"}, extra...)
	what := "TCP stream"
	if mode == "blocks" {
		what = units.FormatBytes(float64(r.opt.Block)) + " blocks"
	}
	stop := r.ticking(d, "interlink bench --mode %s: %s %s -> %s over %s (%s) ...", mode, what, from.name, to.name, b.Interface, label)
	out, _, err := r.exec(ctx, from, args...)
	stop()
	var doc traffic.Report
	if len(out) > 0 {
		if jerr := json.Unmarshal(out, &doc); jerr != nil && err == nil {
			err = fmt.Errorf("demo: bench: decode its JSON: %w", jerr)
		}
	}
	b.Result = doc.Result
	// Interrupted, the bench printed what it measured and exited 3: that
	// is the demo's interruption, not the run's failure.
	if err != nil && ctx.Err() == nil {
		b.Error = err.Error()
	}
	return b
}

// pair returns the nodes of the good pair.
func (r *run) pair() (a, b *nodeAddrs) {
	for i := range r.nodes {
		switch n := &r.nodes[i]; n.name {
		case r.res.Diagnosis.Good[0]:
			a = n
		case r.res.Diagnosis.Good[1]:
			b = n
		}
	}
	return a, b
}

// blocks measures blocks between the good pair over the interconnect (9000)
// and over the public network (1500). Not across the blackhole: the bench's
// control connection would stall there too (no ICMP, so TCP never learns
// the smaller MTU), which is the point of the mesh step.
func (r *run) blocks(ctx context.Context) error {
	a, b := r.pair()
	if a == nil || b == nil {
		return errors.New("demo: the mesh found no pair of nodes with a 9000 path both ways to compare blocks on")
	}
	block := []string{"--block", fmt.Sprint(r.opt.Block)}
	r.res.Blocks = append(r.res.Blocks, r.bench(ctx, fmt.Sprintf("MTU %d", a.icMTU), "blocks", a, b, false, r.opt.Time, block...))
	if ctx.Err() == nil {
		r.res.Blocks = append(r.res.Blocks, r.bench(ctx, fmt.Sprintf("MTU %d", a.pubMTU), "blocks", a, b, true, r.opt.Time, block...))
	}
	if err := firstError(r.res.Blocks); err != nil || ctx.Err() != nil {
		return err
	}
	// Under load the wire shows: the hosts are awake for the next block.
	loaded := append(block, "--outstanding", fmt.Sprint(LoadedOutstanding))
	d := max(r.opt.Time/2, time.Second)
	r.res.Loaded = append(r.res.Loaded, r.bench(ctx, fmt.Sprintf("MTU %d", a.icMTU), "blocks", a, b, false, d, loaded...))
	if ctx.Err() == nil {
		r.res.Loaded = append(r.res.Loaded, r.bench(ctx, fmt.Sprintf("MTU %d", a.pubMTU), "blocks", a, b, true, d, loaded...))
	}
	return firstError(r.res.Loaded)
}

func firstError(runs []Bench) error {
	for _, b := range runs {
		if b.Error != "" {
			return errors.New(b.Error)
		}
	}
	return nil
}

// tcp measures one TCP stream over each of the two paths, for contrast.
func (r *run) tcp(ctx context.Context) error {
	a, b := r.pair()
	d := max(r.opt.Time/2, time.Second)
	r.res.TCP = append(r.res.TCP, r.bench(ctx, fmt.Sprintf("MTU %d", a.icMTU), "tcp", a, b, false, d))
	if ctx.Err() == nil {
		r.res.TCP = append(r.res.TCP, r.bench(ctx, fmt.Sprintf("MTU %d", a.pubMTU), "tcp", a, b, true, d))
	}
	return firstError(r.res.TCP)
}
