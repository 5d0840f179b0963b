package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/labfence"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/shellq"
)

// fence refuses, before anything is sent, a command aimed at an address
// of a lab that is up while it runs outside that lab: from here the
// address is on no link, and its packets would follow the default route
// off the machine. The refusal names the lab and the 'lab exec' line to
// run instead. hosts are HOST or HOST:PORT; names are not looked up.
func fence(e *env, cmd string, hosts ...string) error {
	if o := labfence.Find(labfence.Addrs(hosts...)); o != nil {
		return usageError("%s", o.Error(cmd, e.args))
	}
	return nil
}

// fenceNodes is fence for the nodes of mesh and bench --mode gc: their
// agents and the addresses given for them.
func fenceNodes(e *env, cmd string, nodes []mesh.Node) error {
	var hosts []string
	for _, n := range nodes {
		hosts = append(hosts, n.Agent)
		for _, a := range n.Addrs {
			hosts = append(hosts, a.String())
		}
	}
	return fence(e, cmd, hosts...)
}

// notAgentHint adds, to the error of a peer that is not an interlink
// agent, the way into a lab when one is up: its nodes' addresses answer
// only inside it, so what answered was something else.
func notAgentHint(e *env, err error) error {
	if !errors.Is(err, agent.ErrNotAgent) {
		return err
	}
	names, _ := lab.Labs()
	if len(names) == 0 {
		return err
	}
	return fmt.Errorf("%w; for a lab's node, run it inside the lab (labs up: %s): %s", err, strings.Join(names, ", "),
		shellq.Join(append([]string{"interlink", "lab", "exec", "LAB", "NODE", "--", "interlink"}, e.args...)...))
}
