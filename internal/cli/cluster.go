package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/traffic"
)

func init() { commands = append(commands, newClusterCmd) }

func newClusterCmd(e *env) *cobra.Command {
	var f clusterFlags
	c := &cobra.Command{
		Use:   "cluster [USER@]HOST[:PORT][/ADDR,ADDR...]... | --inventory FILE | --clusterware",
		Short: "Run check and mesh across the nodes of a cluster over SSH, and clean up",
		Long:  clusterLong,
		Example: `  interlink cluster rac1/10.0.0.1,10.0.1.1 rac2/10.0.0.2,10.0.1.2 --user oracle
  interlink cluster --inventory hosts.ini --expect 9000 --collect /tmp/evidence
  interlink cluster --inventory inventory.yaml --identity ~/.ssh/id_ed25519 --json
  interlink cluster --clusterware --expect 9000 --html cluster.html`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCluster(e, f, args) },
	}
	f.bind(c.Flags())
	return c
}

// runCluster checks the flags and nodes, runs the cluster within
// --timeout (progress on a terminal), prints and maps the result.
func runCluster(e *env, f clusterFlags, args []string) error {
	_, probe, err := f.probe.parse("cluster", false)
	if err != nil {
		return err
	}
	hosts, cw, err := clusterHosts(e, f, args)
	if err != nil {
		return err
	}
	opt, err := f.options(probe, cw)
	if err != nil {
		return err
	}
	if showProgress(e, f.probe.asJSON) {
		prog := &progressLine{w: e.stderr, every: 100 * time.Millisecond}
		defer prog.clear()
		opt.Progress = func(node, step string) { prog.show("cluster: " + termtext.Clean(node) + ": " + step) }
	}
	ctx, cancel := context.WithTimeoutCause(e.ctx, f.probe.timeout, fmt.Errorf("--timeout %s reached", f.probe.timeout))
	defer cancel()
	res, err := cluster.Run(ctx, hosts, opt)
	if res == nil {
		return err
	}
	if opt.Progress != nil {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	if f.probe.asJSON {
		if jerr := report.JSON(e.stdout, res); jerr != nil {
			return jerr
		}
	} else {
		if werr := cluster.WriteText(e.stdout, res); werr != nil {
			return fmt.Errorf("cluster: write report: %w", werr)
		}
	}
	if f.html != "" {
		title := fmt.Sprintf("interlink cluster: %d nodes", len(res.Nodes))
		if herr := writeHTML(f.html, report.Page{Title: title, Generated: time.Now(), Results: []any{res}}); herr != nil {
			return fmt.Errorf("cluster: --html: %w", herr)
		}
	}
	if err != nil {
		return fmt.Errorf("cluster: stopped early (%s); %s, the report holds what ran", res.Stopped, cluster.CleanupSummary(res))
	}
	return withCode(clusterCode(res))
}

// clusterHosts reads the nodes from --inventory, the clusterware or the
// arguments.
func clusterHosts(e *env, f clusterFlags, args []string) ([]cluster.Host, *cluster.Clusterware, error) {
	hosts, cw, err := clusterSource(e, f, args)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h.Name] {
			return nil, nil, usageError("cluster: node %s listed twice", termtext.Clean(h.Name))
		}
		seen[h.Name] = true
	}
	return hosts, cw, nil
}

func clusterSource(e *env, f clusterFlags, args []string) ([]cluster.Host, *cluster.Clusterware, error) {
	var hosts []cluster.Host
	fromCW := f.clusterware || f.gridHome != ""
	switch {
	case fromCW && (f.inventory != "" || len(args) > 0):
		if !f.clusterware {
			return nil, nil, usageError("cluster: --grid-home reads the nodes from Oracle Clusterware (as --clusterware): give nodes one way")
		}
		return nil, nil, usageError("cluster: give nodes one way: --clusterware, --inventory or as arguments")
	case fromCW:
		home := f.gridHome
		if home == "" {
			h, err := cluster.FindGridHome("/")
			if err != nil {
				return nil, nil, usageError("cluster: --clusterware: %v", err)
			}
			home = h
		}
		cw, err := cluster.LoadClusterware(e.ctx, home)
		if err != nil {
			return nil, nil, usageError("cluster: --clusterware: %s", termtext.Clean(err.Error()))
		}
		for _, n := range cw.Nodes {
			hosts = append(hosts, cluster.Host{Name: n})
		}
		return hosts, cw, nil
	case f.inventory != "" && len(args) > 0:
		return nil, nil, usageError("cluster: give nodes either with --inventory or as arguments, not both")
	case f.inventory != "":
		r, err := readfile.Open(f.inventory) // never blocks on a FIFO
		if err != nil {
			return nil, nil, usageError("cluster: --inventory: %v", err)
		}
		hosts, err = cluster.ParseInventory(r, f.inventory)
		r.Close()
		if err != nil {
			return nil, nil, usageError("cluster: %s", termtext.Clean(err.Error()))
		}
	case len(args) == 0:
		return nil, nil, usageError("cluster: name the nodes ([USER@]HOST[:PORT][/ADDR,...]), give --inventory FILE, or --clusterware on a node of an Oracle cluster")
	default:
		for _, a := range args {
			h, err := parseClusterNode(a)
			if err != nil {
				return nil, nil, usageError("cluster: %v", err)
			}
			hosts = append(hosts, h)
		}
	}
	return hosts, nil, nil
}

// parseClusterNode reads [USER@]HOST[:PORT][/ADDR,ADDR...].
func parseClusterNode(s string) (cluster.Host, error) {
	var h cluster.Host
	rest, addrs, _ := strings.Cut(s, "/")
	if u, hp, ok := strings.Cut(rest, "@"); ok {
		if u == "" {
			return h, fmt.Errorf("node %q: empty user before '@'", s)
		}
		h.User, rest = u, hp
	}
	host := rest
	if strings.HasPrefix(rest, "[") || strings.Count(rest, ":") == 1 {
		hh, port, err := net.SplitHostPort(rest)
		if err != nil {
			return h, fmt.Errorf("node %q: want [USER@]HOST[:PORT][/ADDR,...]", s)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return h, fmt.Errorf("node %q: %q is not a port", s, port)
		}
		host, h.Port = hh, p
	}
	if cluster.CheckHost(host) != nil {
		return h, fmt.Errorf("node %q: want [USER@]HOST[:PORT][/ADDR,...]", s)
	}
	h.Name = host
	ic, err := cluster.ParseAddrs(addrs)
	if err != nil {
		return h, fmt.Errorf("node %q: interconnect: %v", s, err)
	}
	h.Interconnect = ic
	return h, nil
}

// clusterCode maps a cluster result to the exit code: a critical finding
// or path wins (2), then a node not covered or not cleaned up (3), then
// warnings and problem paths (1).
func clusterCode(res *cluster.Result) int {
	code, unknown := ExitOK, false
	for _, n := range res.Nodes {
		if n.Status != cluster.StatusOK || n.CheckError != "" || !n.Cleanup.Done {
			unknown = true
		}
		if n.Check != nil {
			code = max(code, n.Check.Summary.ExitCode)
		}
	}
	if res.Mesh != nil {
		code = max(code, meshCode(res.Mesh))
	} else if len(res.Nodes) > 1 {
		unknown = true
	}
	if b := res.Bench; b != nil {
		// As interlink bench exits: failed 2, limited 1, not run 3.
		if b.Skipped != "" {
			unknown = true
		}
		for _, p := range b.Pairs {
			switch {
			case p.Report == nil || p.Error != "":
				unknown = true
			case p.Report.Verdict == traffic.VerdictFailed:
				code = max(code, ExitCritical)
			case p.Report.Verdict == traffic.VerdictLimited:
				code = max(code, ExitWarning)
			}
		}
	}
	if g := res.GC; g != nil {
		c, u := gcCode(g)
		code, unknown = max(code, c), unknown || u
	}
	if code < ExitCritical && unknown {
		return ExitUnknown
	}
	return code
}

// gcCode maps a cluster run's gc workload to an exit code as bench --mode
// gc exits: failed 2, lost blocks or a limit 1; unknown when it could not
// run or left a node out.
func gcCode(g *cluster.GC) (code int, unknown bool) {
	unknown = g.Skipped != "" || g.Error != "" || len(g.NotRun) > 0
	r := g.Report
	if r == nil {
		return ExitOK, true
	}
	if len(r.Unreachable) > 0 || r.Interrupted {
		unknown = true
	}
	switch r.Verdict {
	case gc.VerdictFailed:
		return ExitCritical, unknown
	case gc.VerdictOK:
		return ExitOK, unknown
	}
	return ExitWarning, unknown
}
