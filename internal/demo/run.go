package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// agentPort is where the demo's agents listen (interlink's default).
const agentPort = 7471

// agentMaxRate lifts the agent's default send limit (twice the speed of
// the interface a session arrives on, at least 40 Gbit/s): one TCP stream
// over the lab's veth pairs moves about 50 Gbit/s on a 2-core machine, and
// the limit would cap the 9000 side of the comparison and flag the run as
// limited.
const agentMaxRate = "100gbit"

// run is one demo in progress.
type run struct {
	opt    Options
	res    *Result
	lab    *lab.Lab
	dir    string // the lab's directory (lab.Lab.Dir): token and agent logs
	token  string
	agents []*exec.Cmd
	nodes  []nodeAddrs
}

// nodeAddrs are a node's interconnect and public IPv4 addresses.
type nodeAddrs struct {
	node       *lab.Node
	name       string
	ic, pub    netip.Addr
	icIf       string
	pubIf      string
	icMTU      int
	icPort     string // the switch side of the interconnect link
	pubMTU     int
	agentAddr  string
	agentLogFn string
}

// Run builds the demo lab, measures and removes the lab (unless opt.Keep).
// It returns the Result with everything measured, also when a step failed
// (the error says which) or ctx ended (ErrInterrupted). Without the
// privilege it returns lab.ErrPrivilege before creating anything.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Lab == "" {
		opt.Lab = Builtin
	}
	if opt.Time <= 0 {
		opt.Time = DefaultTime
	}
	if opt.Block <= 0 {
		opt.Block = DefaultBlock
	}
	if opt.Binary == "" {
		return nil, errors.New("demo: no interlink binary to run in the nodes")
	}
	topo, err := opt.topology()
	if err != nil {
		return nil, err
	}
	if err := lab.CheckPrivilege(); err != nil {
		return nil, err
	}
	start := time.Now()
	r := &run{opt: opt, res: &Result{Schema: Schema, Lab: opt.Lab, Binary: opt.Binary, Topology: topo, Agents: []Agent{}, Checks: []NodeCheck{},
		Blocks: []Bench{}, TCP: []Bench{}, Advice: []string{}, Errors: []string{}}}
	err = r.all(ctx, topo)
	if ctx.Err() != nil {
		r.res.Interrupted = true
		err = ErrInterrupted
	}
	if err != nil {
		r.res.Errors = append(r.res.Errors, err.Error())
	}
	r.finish(err == nil && opt.Keep)
	r.res.Elapsed = time.Since(start)
	return r.res, err
}

// Validate checks the options that can be checked before anything is
// built (the lab name); Run does the same.
func (o Options) Validate() error {
	_, err := o.topology()
	return err
}

func (o Options) topology() (*lab.Topology, error) {
	topo, err := lab.Load(Builtin)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if o.Lab != "" {
		topo.Name = o.Lab
	}
	if err := topo.Validate(); err != nil {
		return nil, err
	}
	return topo, nil
}

// all runs the steps in order; a failed step ends the demo, since the
// later steps build on it.
func (r *run) all(ctx context.Context, topo *lab.Topology) error {
	steps := []struct {
		s  Section
		fn func(context.Context) error
	}{
		{SectionLab, func(ctx context.Context) error { return r.up(ctx, topo) }},
		{SectionCheck, r.check},
		{SectionMesh, r.mesh},
		{SectionBlocks, r.blocks},
		{SectionTCP, r.tcp},
		{SectionGC, r.gc},
		{SectionAdvice, func(context.Context) error { r.res.Advice = advise(r.res); return nil }},
	}
	for _, st := range steps {
		err := st.fn(ctx)
		r.progress("")
		if ctx.Err() != nil {
			err = ErrInterrupted
		}
		// A measurement cut short still shows what it measured.
		partial := st.s == SectionBlocks && len(r.res.Blocks) > 0 || st.s == SectionTCP && len(r.res.TCP) > 0 ||
			st.s == SectionGC && r.res.GC != nil && r.res.GC.Result != nil
		if r.opt.Section != nil && (err == nil || partial) {
			r.opt.Section(st.s, r.res)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *run) progress(format string, a ...any) {
	if r.opt.Progress != nil {
		r.opt.Progress(fmt.Sprintf(format, a...))
	}
}

// up builds the lab, writes the token and starts an agent on every node.
func (r *run) up(ctx context.Context, topo *lab.Topology) error {
	r.progress("building lab %s (3 nodes, 2 switches) ...", topo.Name)
	t0 := time.Now()
	l, err := lab.Up(ctx, topo)
	if err != nil {
		return err
	}
	r.lab = l
	r.res.LabUp = time.Since(t0)
	// In the lab's own directory, not a temporary one: `lab down` removes
	// it with the lab, also after the demo was killed.
	if r.dir, err = l.Dir(); err != nil {
		return fmt.Errorf("demo: token directory: %w", err)
	}
	r.token = filepath.Join(r.dir, "token")
	secret := make([]byte, 32)
	rand.Read(secret) // never fails (crypto/rand)
	if err := os.WriteFile(r.token, []byte(base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600); err != nil {
		return fmt.Errorf("demo: write token: %w", err)
	}
	for _, n := range l.Nodes() {
		a, err := addrsOf(n, topo)
		if err != nil {
			return err
		}
		r.nodes = append(r.nodes, a)
	}
	r.progress("starting interlink agent on %d nodes ...", len(r.nodes))
	for i := range r.nodes {
		if err := r.startAgent(ctx, &r.nodes[i]); err != nil {
			return err
		}
	}
	for i := range r.nodes {
		if err := r.waitAgent(ctx, &r.nodes[i]); err != nil {
			return err
		}
	}
	return nil
}

// addrsOf finds a node's interconnect and public links in the topology.
func addrsOf(n *lab.Node, topo *lab.Topology) (nodeAddrs, error) {
	a := nodeAddrs{node: n, name: n.Name()}
	for _, spec := range topo.Nodes {
		if spec.Name != a.name {
			continue
		}
		for _, l := range spec.Links {
			var v4 netip.Addr
			for _, p := range l.Addresses {
				if p.Addr().Is4() {
					v4 = p.Addr()
					break
				}
			}
			switch l.Switch {
			case icSwitch:
				a.ic, a.icIf, a.icMTU, a.icPort = v4, l.Name, l.MTU, l.Port
			case pubSwitch:
				a.pub, a.pubIf, a.pubMTU = v4, l.Name, l.MTU
			}
		}
	}
	if !a.ic.IsValid() || !a.pub.IsValid() {
		return a, fmt.Errorf("demo: node %s has no IPv4 address on switch %s or %s", a.name, icSwitch, pubSwitch)
	}
	a.agentAddr = netip.AddrPortFrom(a.pub, agentPort).String()
	return a, nil
}

// startAgent starts `interlink agent` in the node, logging to a file in the
// lab's directory (a pipe would break when a kept agent outlives us).
func (r *run) startAgent(ctx context.Context, n *nodeAddrs) error {
	n.agentLogFn = filepath.Join(r.dir, "agent-"+n.name+".log")
	logf, err := os.OpenFile(n.agentLogFn, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("demo: agent log: %w", err)
	}
	defer logf.Close()
	// The agent listens on every address of its node: the demo reaches it
	// on the public address (mesh control, the 1500 bench) and on the
	// interconnect address (the 9000 bench), where data goes to the agent.
	cmd := exec.Command(r.opt.Binary, "agent", "--listen", netip.AddrPortFrom(netip.IPv4Unspecified(), agentPort).String(),
		"--token-file", r.token, "--max-rate", agentMaxRate)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = procAttr(!r.opt.Keep)
	if err := n.node.Start(cmd); err != nil {
		return fmt.Errorf("demo: start agent on %s: %w", n.name, err)
	}
	r.agents = append(r.agents, cmd)
	r.res.Agents = append(r.res.Agents, Agent{Node: n.name, Address: n.agentAddr, PID: cmd.Process.Pid})
	return nil
}

// waitAgent waits until the agent's log says it listens.
func (r *run) waitAgent(ctx context.Context, n *nodeAddrs) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(n.agentLogFn)
		if bytes.Contains(b, []byte("listening on")) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("demo: agent on %s did not start: %s", n.name, lastLine(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exec runs the interlink binary in a node and returns its stdout and exit
// code. An exit code of 3 (UNKNOWN) is an error carrying its stderr line.
func (r *run) exec(ctx context.Context, n *nodeAddrs, args ...string) ([]byte, int, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, r.opt.Binary, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = procAttr(true)
	// Ctrl-C: ask the command to stop so it reports what it measured.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
	if err := n.node.Start(cmd); err != nil {
		return nil, 0, fmt.Errorf("demo: %s on %s: %w", args[0], n.name, err)
	}
	err := cmd.Wait()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return stdout.Bytes(), 0, fmt.Errorf("demo: %s on %s: %w", args[0], n.name, err)
		}
		code = ee.ExitCode()
	}
	if code < 0 || code == 3 {
		return stdout.Bytes(), code, fmt.Errorf("demo: interlink %s on %s: %s", args[0], n.name, lastLine(stderr.Bytes()))
	}
	return stdout.Bytes(), code, nil
}

// ticking calls progress about once a second with the seconds passed (of
// total, when known), until the returned stop is called.
func (r *run) ticking(total time.Duration, format string, a ...any) (stop func()) {
	msg := fmt.Sprintf(format, a...)
	if r.opt.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(finished)
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			if total > 0 {
				r.progress("%s %.0f/%.0f s", msg, time.Since(t0).Seconds(), total.Seconds())
			} else {
				r.progress("%s %.0f s", msg, time.Since(t0).Seconds())
			}
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

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
	return firstError(r.res.Blocks)
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

// finish stops the agents and removes the lab and the token, unless keep.
func (r *run) finish(keep bool) {
	if keep && r.lab != nil {
		r.res.Kept, r.res.TokenFile = true, r.token
		return
	}
	r.progress("removing lab %s ...", r.opt.Lab)
	for _, c := range r.agents {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range r.agents {
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			c.Process.Kill()
			<-done
		}
	}
	// Always: Down also clears what an interrupted Up left.
	if err := lab.Down(r.opt.Lab); err != nil && !errors.Is(err, lab.ErrNotFound) {
		r.res.Errors = append(r.res.Errors, err.Error())
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
	r.progress("")
}

// lastLine is the last non-empty line of b, for error messages.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	s := strings.TrimSpace(lines[len(lines)-1])
	if s == "" {
		return "no output"
	}
	return s
}
