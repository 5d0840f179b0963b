package cli

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/termtext"
)

// clusterFlags are cluster's flags; probe holds the mesh's search flags.
type clusterFlags struct {
	inventory, user, sshConfig, collect string
	gridHome, bench, html               string
	benchTime                           time.Duration
	clusterware                         bool
	identities, knownHosts              []string
	parallel, agentPort                 int
	connect, stall                      time.Duration
	probe                               probeFlags
}

const clusterLong = `Reach every node over SSH, copy this interlink binary to a temp dir on it (unless
an identical one is on the node's PATH), start 'interlink agent' with a fresh
one-run token (mode 600), run 'interlink check --json' on it, then one mesh
across every node's interconnect addresses, stop the agents by PID, remove the
temp dirs, and print one report.

Nodes come from the command line, [USER@]HOST[:PORT][/ADDR,ADDR...] with the
interconnect addresses after '/', or from --inventory: an Ansible inventory (INI
or YAML; host variables ansible_host, ansible_user, ansible_port,
ansible_ssh_private_key_file, and interconnect=ADDR,ADDR) or a YAML list:
  nodes:
    - {name: rac1, host: 192.0.2.11, user: oracle, interconnect: [10.0.0.1, 10.0.1.1]}
A node without interconnect addresses is probed on the address SSH reached.

--clusterware, on a node of an Oracle cluster, takes the nodes from the grid
home (--grid-home, else /etc/oracle/olr.loc's crs_home, $GRID_HOME,
/u01/app/*/grid): the live membership from GRID_HOME/bin/olsnodes, else
NODE_NAME_LIST of GRID_HOME/crs/install/crsconfig_params. The node names go to
SSH as they are (~/.ssh/config may map them). Each node's interconnect
addresses are found on the node itself, in the check that runs there before the
mesh: its addresses in the networks its GPnP profile marks cluster_interconnect
(interface name and subnet; HAIP's link-local addresses do not count). A network
on which some node has no address is left out of the mesh and named.

SSH uses known_hosts (--known-hosts, else ~/.ssh/known_hosts and
/etc/ssh/ssh_known_hosts), the ssh-agent (SSH_AUTH_SOCK), identity files and
~/.ssh/config's HostName, User, Port, IdentityFile, UserKnownHostsFile. Host-key
checking is never skipped: a node whose key is unknown or changed is refused
and reported. The mesh runs from this host: each agent's control session goes
through that node's SSH connection, so only SSH must reach the nodes; the
agents reach each other on the address SSH reached (port --agent-port).

A node that cannot be reached (refused, timeout, auth, host key) is reported
and the others go on; at most --parallel nodes are set up at once. A transfer
to or from a node (the binary's copy, the token, the check bundle) that stands
still for --stall-timeout, nothing taken, arrived or acknowledged, cuts that
node off with its likely cause: on a path that carries the SSH handshake but
not full-size segments, an MTU blackhole on the management path. Ctrl-C or
--timeout stops the run within seconds: what is under way is cut off (its SSH
connection closed), and every node is still cleaned up, over a new connection
where the old one was cut.

Exit 2 when a node has a critical finding or a path is below --expect; 3 when
a node could not be reached, failed a step or was not cleaned up; 1 for
warnings and problem paths; 0 otherwise. With --bench, a failed pair counts as
critical, a limited one as a warning, one that could not run as unknown.

--bench blocks|tcp|udp runs 'interlink bench' after the mesh, for --bench-time
per pair, from each node to the next in node order (the last to the first), on
each interconnect network, one pair at a time. It runs on the sending node over
its SSH connection, with the run's token, against the receiving node's agent at
its interconnect address: the data goes node to node over the interconnect,
never through this host. Each pair reports blocks/s and round-trip p50/p99
(blocks) or the rate (tcp, udp), and every limit that held it back.

--bench gc runs one 'interlink bench --mode gc' for --bench-time over every
node whose agent started, all at once: Cache Fusion's 2-way and 3-way block
transfers between every pair, on each node's first interconnect address. It
runs on the first such node over its SSH connection with the run's token, and
only sets up, starts and collects: the blocks go agent to agent. The report
gives blocks/s, 2-way and 3-way median receive time and lost blocks per pair
(the pairs that lost blocks named) and AWR's Interconnect Ping Latency Stats;
a node that is down is named and the others measured. A failed run counts as
critical, lost blocks or a limit as a warning, a node left out as unknown.

--html FILE also writes the report as one self-contained HTML file (the mesh
as a heatmap, each node's status and findings, the bench pairs); 'interlink
report' renders a saved --json the same way.`

const defaultBenchTime = 3 * time.Second

func (f *clusterFlags) bind(fl *pflag.FlagSet) {
	fl.StringVar(&f.inventory, "inventory", "", "Ansible inventory (INI or YAML) or YAML list of nodes")
	fl.BoolVar(&f.clusterware, "clusterware", false, "nodes from this host's Oracle Clusterware (olsnodes, else crsconfig_params), interconnect from GPnP")
	fl.StringVar(&f.gridHome, "grid-home", "", "with --clusterware: the grid home (default: olr.loc's crs_home, $GRID_HOME, /u01/app/*/grid)")
	fl.StringVar(&f.user, "user", "", "SSH user where the inventory and ~/.ssh/config name none (default: yours)")
	fl.StringArrayVar(&f.identities, "identity", nil, "private key file to offer (repeatable; the ssh-agent's keys are offered too)")
	fl.StringArrayVar(&f.knownHosts, "known-hosts", nil, "known_hosts file (repeatable; default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)")
	fl.StringVar(&f.sshConfig, "ssh-config", "", "ssh_config file (default ~/.ssh/config; 'none' for none)")
	fl.IntVar(&f.parallel, "parallel", 8, "nodes set up and cleaned up at once")
	fl.IntVar(&f.agentPort, "agent-port", 7471, "port the agents listen on during the run")
	fl.DurationVar(&f.connect, "connect-timeout", 10*time.Second, "SSH connect and login timeout per node")
	fl.DurationVar(&f.stall, "stall-timeout", cluster.DefaultStall, "cut a node off when a transfer to or from it stands still this long")
	fl.StringVar(&f.collect, "collect", "", "keep each node's check bundle as DIR/NODE.tar.gz (like check --collect)")
	fl.StringVar(&f.bench, "bench", "", "after the mesh, bench each node to the next on each interconnect network (blocks, tcp or udp), or every node at once (gc) (default none)")
	fl.DurationVar(&f.benchTime, "bench-time", defaultBenchTime, "with --bench: how long each pair sends (gc: the whole workload)")
	fl.StringVar(&f.html, "html", "", "also write the report as a self-contained HTML file")
	fl.StringVar(&f.probe.expect, "expect", "", "expected path MTU (e.g. 9000): exit 2 if a path is below")
	fl.StringVar(&f.probe.max, "max", "", "largest packet to try (default: the sending interface's MTU)")
	fl.IntVar(&f.probe.tries, "tries", 3, "attempts per size before it counts as failed")
	fl.BoolVar(&f.probe.asJSON, "json", false, "print JSON (schema interlink.cluster/v1)")
	fl.DurationVar(&f.probe.timeout, "timeout", 10*time.Minute, "stop the run after this long (cleanup still runs)")
}

// options checks the flags that shape the run (limits, --bench, the files
// and directories named) into the run's options.
func (f *clusterFlags) options(probe agent.ProbeOptions, cw *cluster.Clusterware) (cluster.Options, error) {
	var none cluster.Options
	switch {
	case f.parallel < 1 || f.parallel > 256:
		return none, usageError("cluster: --parallel must be 1 to 256")
	case f.agentPort < 1 || f.agentPort > 65535:
		return none, usageError("cluster: --agent-port must be 1 to 65535")
	case f.connect <= 0:
		return none, usageError("cluster: --connect-timeout must be positive")
	case f.stall < time.Second:
		return none, usageError("cluster: --stall-timeout %s: want 1s or more", f.stall)
	case f.bench != "" && f.bench != "blocks" && f.bench != "tcp" && f.bench != "udp" && f.bench != cluster.BenchGC:
		return none, usageError("cluster: --bench %q: want blocks, tcp, udp or gc", termtext.Clean(f.bench))
	case f.bench == "" && f.benchTime != defaultBenchTime:
		return none, usageError("cluster: --bench-time goes with --bench (no bench runs without it)")
	case f.bench != "" && (f.benchTime < 100*time.Millisecond || f.benchTime > 10*time.Minute):
		return none, usageError("cluster: --bench-time %s: want 100ms to 10m", f.benchTime)
	}
	if f.html != "" {
		if err := writableDir(f.html); err != nil {
			return none, usageError("cluster: --html %s: %v", termtext.Clean(f.html), err)
		}
	}
	cfg, err := cluster.LoadSSHConfig(f.sshConfig)
	if err != nil {
		return none, usageError("cluster: %v", err)
	}
	if err := checkSSHFiles(f.identities, f.knownHosts); err != nil {
		return none, err
	}
	if f.collect != "" {
		if st, err := os.Stat(f.collect); err != nil || !st.IsDir() {
			return none, usageError("cluster: --collect %s: not a directory", f.collect)
		}
	}
	return cluster.Options{
		User: f.user, Identities: f.identities, KnownHosts: f.knownHosts, SSHConfig: cfg,
		Parallel: f.parallel, Connect: f.connect, Stall: f.stall, AgentPort: f.agentPort,
		AgentLifetime: f.probe.timeout + 5*time.Minute, Collect: f.collect, Probe: probe,
		Software: "interlink " + buildVersion().Version, Clusterware: cw,
		Bench: f.bench, BenchTime: f.benchTime,
	}, nil
}

// checkSSHFiles reads every --identity and --known-hosts file before any
// node is contacted: one that is missing, not a regular file (a FIFO hung
// the run), or not a key or known_hosts file is bad input, not a note
// repeated for every node. An encrypted key is fine here (it is skipped
// with a note, as before: the ssh-agent may hold it).
func checkSSHFiles(identities, knownHosts []string) error {
	for _, p := range identities {
		b, err := readfile.ReadAll(p, 1<<20)
		if err != nil { // it names the file
			return usageError("cluster: --identity: %s", termtext.Clean(err.Error()))
		}
		var pm *ssh.PassphraseMissingError
		if _, err := ssh.ParsePrivateKey(b); err != nil && !errors.As(err, &pm) {
			return usageError("cluster: --identity %s: not a private key (%v)", termtext.Clean(p), err)
		}
	}
	for _, p := range knownHosts {
		f, err := readfile.Open(p)
		if err != nil { // it names the file
			return usageError("cluster: --known-hosts: %s", termtext.Clean(err.Error()))
		}
		f.Close()
		if _, err := knownhosts.New(p); err != nil {
			return usageError("cluster: --known-hosts %s: %v", termtext.Clean(p), err)
		}
	}
	return nil
}
