package demo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
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
	// It allows CPU latency holds: the lab's nodes share this host's
	// kernel, so a kept lab's 'bench --cpu-latency' holds here either way.
	cmd := exec.Command(r.opt.Binary, "agent", "--listen", netip.AddrPortFrom(netip.IPv4Unspecified(), agentPort).String(),
		"--token-file", r.token, "--max-rate", agentMaxRate, "--allow-cpu-latency")
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
