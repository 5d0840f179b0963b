package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/termtext"
)

// progressLine rewrites one line on a terminal, at most once per every, so
// that a run of thousands of pairs costs a few hundred writes. A nil
// *progressLine does nothing.
type progressLine struct {
	w     io.Writer
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	shown bool
}

func (p *progressLine) show(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r%s\033[K", s)
	}
}

func (p *progressLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func init() { commands = append(commands, newMeshCmd) }

// meshFlags are mesh's flags: the search flags it shares with pmtu, and
// the nodes and how many pairs each takes part in at once.
type meshFlags struct {
	probe     probeFlags
	nodesFile string
	perNode   int
}

const meshLong = `Make every node's agent probe every other node's agent, on every interconnect
network, in both directions, and print a matrix of path MTUs (row: from, column: to) per network, then the
problem paths with their verdicts.

Nodes come from --nodes FILE, one per line:
  # name  agent[:port]     interconnect addresses (the i-th of each node: network i)
  node1   198.18.0.1       198.18.10.1 fd00:10::1
or from the command line as [NAME=]AGENT[:PORT][@ADDR,ADDR...]. A node without
addresses is probed on its agent address.

There are no rounds: each node takes part in at most --per-node working pairs
at once, a pair starts as soon as both of its nodes have room, and the node with
the most work left goes first. A pair that mostly waits out a probe timeout (a
blackholed path's search does, once per direction) loads nobody: it counts for
the share of its time it works, so a blackholed node runs up to 12 pairs at once
(each pair holds one session on both agents; an agent grants 16), and holds back
no other path. The report names the slowest node and how much of its time was
waiting.

Every agent is contacted once first: a node whose agent cannot be reached is
listed once (grouped by cause) and its paths are not tried. Up to 16 nodes the
report is a matrix per network; beyond, one line per node with problems and the
problem paths grouped by verdict (--json always holds every path). --timeout
bounds the whole run: it stops there, reports what was measured and marks the
rest "n/m" (not measured), with exit 3. Progress goes to a terminal only.

Exit 2 when a path is below --expect; 1 when a path has a problem verdict
(icmp, blackhole, unreachable) or could not be measured; 3 when the run was cut
short; 0 otherwise.`

func newMeshCmd(e *env) *cobra.Command {
	var f meshFlags
	c := &cobra.Command{
		Use:   "mesh [NAME=]AGENT[:PORT][@ADDR,...]... | --nodes FILE",
		Short: "Prove the path MTU of every path between N nodes, as a matrix",
		Long:  meshLong,
		Args:  cobra.ArbitraryArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runMesh(e, &f, args) },
	}
	f.probe.add(c)
	c.Flags().StringVar(&f.nodesFile, "nodes", "", "file listing the nodes: NAME AGENT[:PORT] [ADDR ...] per line")
	c.Flags().IntVar(&f.perNode, "per-node", mesh.DefaultPerNode, "working pairs a node takes part in at once (pairs only waiting out probe timeouts count for their working share; at most 12 pairs in all)")
	return c
}

// meshNodes reads the nodes from --nodes or the arguments.
func meshNodes(file string, args []string) ([]mesh.Node, error) {
	return readNodes(file, args, nodeMessages{cmd: "mesh", both: "give nodes either with --nodes or as arguments, not both"})
}

// nodeMessages words what readNodes says for one command; argsCheck, when
// set, vets the nodes given as arguments before mesh.Check does.
type nodeMessages struct {
	cmd       string // prefix of every message: "mesh", "bench"
	both      string // when both --nodes and arguments are given
	argsCheck func([]mesh.Node) error
}

// readNodes reads the nodes of mesh and bench --mode gc from the --nodes
// file or the arguments (not both); every problem is a usage error.
func readNodes(file string, args []string, m nodeMessages) ([]mesh.Node, error) {
	var nodes []mesh.Node
	switch {
	case file != "" && len(args) > 0:
		return nil, usageError("%s: %s", m.cmd, m.both)
	case file != "":
		f, err := readfile.Open(file) // never blocks on a FIFO
		if err != nil {
			return nil, usageError("%s: --nodes: %v", m.cmd, err)
		}
		defer f.Close()
		if nodes, err = mesh.ParseNodes(f, file); err != nil { // ParseNodes runs mesh.Check
			// Clean: a binary file's bytes went raw to the terminal.
			return nil, usageError("%s: %s", m.cmd, termtext.Clean(err.Error()))
		}
	default:
		for _, a := range args {
			n, err := mesh.ParseNode(a)
			if err != nil {
				return nil, usageError("%s: %v", m.cmd, err)
			}
			nodes = append(nodes, n)
		}
		if m.argsCheck != nil {
			if err := m.argsCheck(nodes); err != nil {
				return nil, err
			}
		}
		if err := mesh.Check(nodes); err != nil {
			return nil, usageError("%s: %v", m.cmd, err)
		}
	}
	return nodes, nil
}

// runMesh checks the flags and nodes, proves every path within
// --timeout (progress on a terminal), prints the result and maps it to
// the exit code.
func runMesh(e *env, f *meshFlags, args []string) error {
	pf := &f.probe
	tok, opt, err := pf.parse("mesh", true)
	if err != nil {
		return err
	}
	if f.perNode < 1 || f.perNode > mesh.MaxPerNode {
		return usageError("mesh: --per-node %d: give 1 to %d (each pair holds a session on both agents; an agent grants 16)", f.perNode, mesh.MaxPerNode)
	}
	nodes, err := meshNodes(f.nodesFile, args)
	if err != nil {
		return err
	}
	if err := fenceNodes(e, "mesh", nodes); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(e.ctx, pf.timeout, fmt.Errorf("--timeout %s reached", pf.timeout))
	defer cancel()
	mo := mesh.Options{Token: tok, Probe: opt, PerNode: f.perNode, Software: "interlink " + buildVersion().Version}
	var prog *progressLine
	if showProgress(e, pf.asJSON) {
		prog = &progressLine{w: e.stderr, every: 200 * time.Millisecond}
		mo.Progress = func(p mesh.Progress) { prog.show("mesh: " + p.String()) }
	}
	res, err := mesh.Run(ctx, nodes, mo)
	prog.clear()
	if res == nil {
		return err
	}
	if pf.asJSON {
		if jerr := mesh.WriteJSON(e.stdout, res); jerr != nil {
			return jerr
		}
	} else {
		if werr := mesh.WriteText(e.stdout, res); werr != nil {
			return fmt.Errorf("mesh: write report: %w", werr)
		}
	}
	if herr := pf.out.emit(e, "mesh", fmt.Sprintf("interlink mesh: %d nodes", len(res.Nodes)), res); herr != nil {
		return herr
	}
	if err != nil {
		_, _, _, stopped := res.Counts()
		return fmt.Errorf("mesh: stopped early (%s): %d of %d paths not measured, marked n/m; the report holds what was", res.Stopped, stopped, len(res.Paths))
	}
	return withCode(meshCode(res))
}

func meshCode(res *mesh.Result) int {
	code := ExitOK
	for _, p := range res.Paths {
		switch {
		case p.MeetsExpect != nil && !*p.MeetsExpect && p.Error == "":
			code = max(code, ExitCritical)
		case p.Problem():
			// local-limit is a problem as in pmtu: the sender's MTU is
			// below its peer's or the expected one.
			code = max(code, ExitWarning)
		}
	}
	return code
}
