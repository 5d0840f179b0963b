package cli

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/watch"
)

func init() { commands = append(commands, newWatchCmd) }

// watchFlags are watch's flags: mesh's search flags, the nodes, the
// metrics address and the schedule.
type watchFlags struct {
	probe                             probeFlags
	nodesFile, inventory, metricsAddr string
	interval, wakeProbe               time.Duration
	handshakes                        int
	dashboard                         bool
}

const watchLong = `Run a mesh round at once and then every --interval, against agents that already run
on the nodes (contrib/systemd/interlink-agent.service) with the token in --token-file,
and serve the results as Prometheus metrics on http://ADDR/metrics:

  interlink_path_mtu_bytes{from,to,network}        largest packet that crossed the path
  interlink_path_verdict{from,to,network,verdict}  1 for the path's verdict
  interlink_path_problem{from,to,network}          1: not ok, below --expect, or not measured
  interlink_path_probe_loss_ratio{from,to,network} probes lost on retry over probes sent
  interlink_path_rtt_seconds{from,to,network}      summary: node-to-node round trips of the
                                                   probes (last round's quantiles 0, 0.5, 0.9,
                                                   0.99, 1; _sum and _count since the start)
  interlink_agent_up{node}                         the agent answered this round
  interlink_agent_handshake_seconds{node,quantile} handshake from this host to the agent's
                                                   control address (not the interconnect)
  interlink_wake_share_ratio{node}                 share of an 8 KiB block's median round trip
                                                   (one in flight, this host to the node's agent)
                                                   that is the two hosts waking up; above 0.5 the
                                                   hosts, not the network, are most of it
  interlink_wake_seconds{node,end}                 median wake-up of each end (requester: this
                                                   host; responder: the node)
  interlink_wake_probe_rtt_seconds{node}           median round trip of those blocks
  interlink_mesh_rounds_total, interlink_mesh_rounds_incomplete_total,
  interlink_mesh_round_seconds, interlink_mesh_last_complete_timestamp_seconds

Nodes come from a mesh nodes file (--nodes) or an inventory (--inventory, as for
'interlink cluster': the agent is reached at the host's address, the interconnect
host variable lists the addresses to probe). A round is bounded by --interval.
contrib/prometheus/interlink-alerts.yml has example alerting rules. Runs until
stopped; one line per round on stderr. With --dashboard, each round also writes a
text dashboard to stdout (redrawn in place on a terminal): the path MTU matrix,
the problem paths and the node-to-node median round trips.

The wake-up series come from a --wake-probe run (500ms; 0: off) per node per round,
one node after the other: 'bench --mode blocks', one block in flight, from this host
to the node's agent, its round trip split from kernel receive stamps at both ends.`

func newWatchCmd(e *env) *cobra.Command {
	var f watchFlags
	c := &cobra.Command{
		Use:     "watch --nodes FILE | --inventory FILE --token-file FILE --metrics ADDR [flags]",
		Short:   "Re-prove the mesh on a schedule and expose Prometheus metrics",
		Long:    watchLong,
		Example: `  interlink watch --nodes /etc/interlink/nodes --token-file /etc/interlink/token --metrics :9471 --expect 9000`,
		RunE:    func(cmd *cobra.Command, args []string) error { return runWatch(e, &f) },
	}
	f.bind(c)
	return c
}

func (f *watchFlags) bind(c *cobra.Command) {
	fl := c.Flags()
	f.probe.addSearch(fl) // no --timeout (--interval bounds a round), --json or output flags: rounds are served as metrics
	fl.StringVar(&f.nodesFile, "nodes", "", "mesh nodes file: NAME AGENT[:PORT] [ADDR ...] per line")
	fl.StringVar(&f.inventory, "inventory", "", "Ansible inventory or YAML list of nodes (as for interlink cluster)")
	fl.StringVar(&f.metricsAddr, "metrics", "", "address to serve Prometheus metrics on, e.g. :9471")
	fl.DurationVar(&f.interval, "interval", time.Minute, "time between rounds (and the bound of one round)")
	fl.IntVar(&f.handshakes, "handshakes", 3, "handshakes timed per agent per round")
	fl.DurationVar(&f.wakeProbe, "wake-probe", watch.DefaultWakeProbe, "per node per round: 8 KiB blocks, one in flight, to the agent, for the hosts' wake-up share of the round trip (0: off)")
	fl.BoolVar(&f.dashboard, "dashboard", false, "write a text dashboard to stdout each round (matrix, problems, round trips)")
}

// runWatch checks the flags and nodes, serves the metrics and runs a
// mesh round every --interval until the context ends.
func runWatch(e *env, f *watchFlags) error {
	tok, opt, err := f.probe.parseSearch("watch", true)
	if err != nil {
		return err
	}
	if f.metricsAddr == "" {
		return usageError("watch: --metrics ADDR is required (e.g. :9471)")
	}
	if f.interval < time.Second {
		return usageError("watch: --interval must be at least 1s")
	}
	if f.handshakes < 0 || f.handshakes > 100 {
		return usageError("watch: --handshakes must be 0 to 100")
	}
	if f.wakeProbe != 0 && (f.wakeProbe < traffic.MinInterval || f.wakeProbe > f.interval/2) {
		return usageError("watch: --wake-probe %s: want 0 (off) or %s to half of --interval", f.wakeProbe, traffic.MinInterval)
	}
	nodes, err := watchNodes(f.nodesFile, f.inventory)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	w := watch.New(reg)
	ln, err := net.Listen("tcp", f.metricsAddr)
	if err != nil {
		return usageError("watch: --metrics %s: %v", f.metricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(e.stderr, "interlink watch: %d nodes every %s, metrics on http://%s/metrics\n", len(nodes), f.interval, ln.Addr())
	wo := watch.Options{
		Mesh:     mesh.Options{Token: tok, Probe: opt, Software: "interlink " + buildVersion().Version},
		Interval: f.interval, Handshakes: f.handshakes, WakeProbe: f.wakeProbe,
		Round: func(r watch.Round) { watchRound(e, f, r) },
	}
	return w.Run(e.ctx, nodes, wo)
}

// watchRound prints a round's line on stderr and, with --dashboard, the
// dashboard on stdout (redrawn in place on a terminal).
func watchRound(e *env, f *watchFlags, r watch.Round) {
	lowest := "n/a" // no path measured this round: there is no lowest
	if r.LowestPathMTU > 0 {
		lowest = fmt.Sprintf("%d (%s)", r.LowestPathMTU, termtext.Clean(r.LowestPathMTUFrom))
	}
	line := fmt.Sprintf("round %d: %d paths, %d with a problem, %d agents unreachable, lowest path MTU %s, %s",
		r.N, r.Paths, r.Problems, r.Unreachable, lowest, r.Elapsed.Round(time.Millisecond))
	if r.Stopped != "" {
		line += "; cut short: " + r.Stopped
	}
	fmt.Fprintln(e.stderr, line)
	if f.dashboard {
		if isTerminal(e.stdout) {
			fmt.Fprint(e.stdout, "\033[H\033[2J") // home, clear
		} else if r.N > 1 {
			fmt.Fprintln(e.stdout)
		}
		watch.WriteDashboard(e.stdout, r, f.interval)
	}
}

// watchNodes reads the mesh nodes from --nodes or --inventory.
func watchNodes(nodesFile, inventory string) ([]mesh.Node, error) {
	switch {
	case (nodesFile == "") == (inventory == ""):
		return nil, usageError("watch: give exactly one of --nodes FILE and --inventory FILE")
	case nodesFile != "":
		f, err := readfile.Open(nodesFile) // never blocks on a FIFO
		if err != nil {
			return nil, usageError("watch: --nodes: %v", err)
		}
		defer f.Close()
		nodes, err := mesh.ParseNodes(f, nodesFile)
		if err != nil {
			return nil, usageError("watch: %s", termtext.Clean(err.Error()))
		}
		return nodes, nil
	}
	f, err := readfile.Open(inventory)
	if err != nil {
		return nil, usageError("watch: --inventory: %v", err)
	}
	defer f.Close()
	hosts, err := cluster.ParseInventory(f, inventory)
	if err != nil {
		return nil, usageError("watch: %s", termtext.Clean(err.Error()))
	}
	var nodes []mesh.Node
	for _, h := range hosts {
		addr := h.Address
		if addr == "" {
			addr = h.Name
		}
		a, err := agent.HostPort(addr)
		if err != nil {
			return nil, usageError("watch: host %s: %v", termtext.Clean(h.Name), err)
		}
		nodes = append(nodes, mesh.Node{Name: h.Name, Agent: a, Addrs: h.Interconnect})
	}
	if err := mesh.Check(nodes); err != nil {
		return nil, usageError("watch: %s", termtext.Clean(err.Error()))
	}
	return nodes, nil
}
