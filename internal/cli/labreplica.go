package cli

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/replica"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

func init() { labCommands = append(labCommands, newLabReplicaCmd) }

// labReplicaFlags are lab replica's flags.
type labReplicaFlags struct {
	write, nodes, name string
	up, asJSON         bool
}

const labReplicaLong = `replica makes a lab topology of the cluster a run measured, to try a change there
before the maintenance window. RUN is the JSON of 'interlink cluster --collect DIR
--json' (its bundles are found where the run wrote them, else beside the JSON), a
directory holding that JSON and the bundles, or a directory of 'check --collect'
bundles (NAME.tar.gz; the paths were then not measured).

The replica has one lab node per cluster node, named as the cluster names it (lower
case, the first label of an FQDN); its interconnect, storage and public interfaces
with their addresses, MTUs and IPv4 routes (a bond, VLAN or bridge becomes one link,
and the file says so); one switch per subnet; a switch port at the size where the
mesh found a blackhole toward a node; a router where the routes go through a gateway,
with the MTU an ICMP-limited hop reported; an agent on every node, and an NFS server
where the nodes mount one. Every measured path is compared with what the replica
will give, and what it cannot reproduce (link speed, bonding, offloads, kernels,
sysctls) is listed.

--write FILE writes the topology (a file to read and edit; 'lab up FILE' builds it)
and prints the summary; without it the topology goes to stdout. --nodes FILE writes
the nodes file for a mesh in the replica (the run's names and addresses, so that
'interlink diff RUN replica-mesh.json' compares path by path). --up builds the lab
too (root). Bad input (another schema, two nodes with one address, a hostile name,
more nodes than a lab builds) is one line and exit 3, and nothing is written.`

func newLabReplicaCmd(e *env) *cobra.Command {
	var f labReplicaFlags
	c := &cobra.Command{
		Use:   "replica RUN [--write FILE] [--nodes FILE] [--up]",
		Short: "Make a lab of a real cluster as measured: a cluster run's bundles and mesh, or check bundles",
		Long:  labReplicaLong,
		Example: `  interlink cluster --inventory hosts.ini --collect run --json > run/cluster.json
  interlink lab replica run/cluster.json --write replica.yaml --nodes replica.nodes --up
  interlink lab replica bundles/ > replica.yaml`,
		Args: exactArgs(1, "RUN: a cluster run's JSON or a directory of bundles"),
		RunE: func(cmd *cobra.Command, args []string) error { return runLabReplica(e, f, args[0]) },
	}
	fl := c.Flags()
	fl.StringVar(&f.write, "write", "", "write the topology to FILE (and print the summary)")
	fl.StringVar(&f.nodes, "nodes", "", "write a nodes file for interlink mesh --nodes in the replica")
	fl.StringVar(&f.name, "name", replica.DefaultName, "the lab's name")
	fl.BoolVar(&f.up, "up", false, "build the lab too (needs root)")
	fl.BoolVar(&f.asJSON, "json", false, "print the replica as JSON (schema "+replica.Schema+")")
	return c
}

// runLabReplica builds the replica of run, checks the privilege --up
// needs, writes the files asked for, builds the lab, then prints: nothing
// is written when the input is bad.
func runLabReplica(e *env, f labReplicaFlags, run string) error {
	if f.name == "" {
		// It became "replica" and, with --up, replaced that lab (as
		// lab up --name "" did).
		return usageError("lab replica: --name is empty: a lab needs a name")
	}
	r, topo, err := buildReplica(e, f, run)
	if err != nil {
		return err
	}
	// Both files' places are checked before either is written: a bad
	// --nodes must not leave the --write file behind.
	for _, o := range []struct{ flag, path string }{{"--write", f.write}, {"--nodes", f.nodes}} {
		if o.path == "" {
			continue
		}
		if err := writableDir(o.path); err != nil {
			return usageError("lab replica: %s %s: %v", o.flag, termtext.Clean(o.path), err)
		}
	}
	if f.up {
		if err := lab.CheckPrivilege(); err != nil {
			return err
		}
	}
	if f.write != "" {
		if err := atomicfile.WriteFile(f.write, topo, atomicfile.Options{}); err != nil {
			return err
		}
	}
	if f.nodes != "" {
		var b bytes.Buffer
		if err := r.WriteNodes(&b); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(f.nodes, b.Bytes(), atomicfile.Options{}); err != nil {
			return err
		}
	}
	var st *lab.Status
	if f.up {
		if _, err := lab.Up(e.ctx, r.Topology, lab.WithStatus(&st)); err != nil {
			return err
		}
	}
	return printReplica(e, f, r, topo, st)
}

// buildReplica loads run and builds its replica and topology file.
func buildReplica(e *env, f labReplicaFlags, run string) (*replica.Replica, []byte, error) {
	loaded, err := replica.Load(e.ctx, run)
	if err != nil {
		return nil, nil, replicaErr(err)
	}
	r, err := replica.Build(loaded, replica.Options{Name: f.name})
	if err != nil {
		return nil, nil, replicaErr(err)
	}
	r.Topology.File = f.write
	if f.write == "" {
		r.Topology.File = "replica of " + run
	}
	var topo bytes.Buffer
	if err := r.WriteYAML(&topo); err != nil {
		return nil, nil, err
	}
	return r, topo.Bytes(), nil
}

// printReplica prints the replica as JSON, the topology itself (no
// --write), or the summary and the lab's status (--up).
func printReplica(e *env, f labReplicaFlags, r *replica.Replica, topo []byte, st *lab.Status) error {
	switch {
	case f.asJSON:
		return report.JSON(e.stdout, r)
	case f.write == "":
		_, err := e.stdout.Write(topo)
		return err
	}
	w := textout.New(e.stdout)
	r.WriteText(w, replica.Files{Topology: f.write, Nodes: f.nodes, Up: f.up, TokenFile: lab.AgentTokenFile(r.Topology.Name)})
	if st != nil {
		fmt.Fprintln(w)
		st.WriteText(w)
	}
	if err := w.Err(); err != nil {
		return fmt.Errorf("lab replica: write report: %w", err)
	}
	return nil
}

func replicaErr(err error) error {
	if errors.Is(err, replica.ErrInput) {
		msg := err.Error()
		if p := replica.ErrInput.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
			msg = msg[len(p):]
		}
		return usageError("lab replica: %s", msg)
	}
	return err
}
