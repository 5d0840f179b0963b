package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/textout"
)

const labExecLong = `exec runs CMD inside node NODE of lab NAME, as 'ip netns exec' does: in the
node's network namespace, with /sys remounted so /sys/class/net shows the
node's interfaces. CMD's exit code is passed through (128+N when killed by
signal N). INTERLINK_LAB and INTERLINK_NODE are set in its environment.
SIGTERM and SIGHUP are passed on to CMD; if interlink itself is killed,
CMD gets SIGKILL (it is never left running on its own).

In a VM node (vm: in the topology) CMD runs in the guest, under its own
kernel, through the guest's serial command channel: its output and exit
code come back, its stdin is /dev/null, Ctrl-C or SIGTERM sends it
SIGTERM, and commands in one VM node run one after another.`

func newLabExecCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "exec NAME NODE -- CMD [ARGS...]",
		Short: "Run a command inside a lab node, with the node's own interfaces, /proc/net and /sys/class/net",
		Long:  labExecLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(labExecArgs(args)) < 3 {
				return usageError("%s: expected NAME NODE -- CMD [ARGS...]", cmdPath(cmd))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runLabExec(e, labExecArgs(args)) },
	}
	// Everything after NAME NODE belongs to CMD, flags included.
	c.Flags().SetInterspersed(false)
	return c
}

// labExecArgs is NAME NODE CMD [ARGS...]: args without the "--" after
// NODE, where one is given (args itself is left as it is).
func labExecArgs(args []string) []string {
	if len(args) >= 3 && args[2] == "--" {
		return append(args[:2:2], args[3:]...)
	}
	return args
}

// runLabExec finds the lab's node and runs CMD in it (lab.Node.Exec: in
// the node's namespaces, or in the guest of a VM node) with the terminal
// or pipes of interlink itself, passes SIGTERM and SIGHUP on to it, and
// returns its exit code (128+N when killed by signal N). args is
// labExecArgs's.
func runLabExec(e *env, args []string) error {
	if err := lab.CheckPrivilege(); err != nil {
		return err
	}
	l, err := lab.Open(args[0])
	if err != nil {
		return labNotUp(args[0], err)
	}
	n, err := l.Node(args[1])
	if err != nil {
		return usageError("%v", err)
	}
	// SIGTERM and SIGHUP for interlink are meant for CMD (a terminal's
	// Ctrl-C already reaches CMD in a namespace node, in the same process
	// group; it ends e.ctx, which ends CMD in a VM node).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// The file itself: the command gets the terminal or the pipe, not a
	// pipe of ours with a copying goroutine.
	code, err := n.Exec(e.ctx, args[2:], textout.Underlying(e.stdout), e.stderr, lab.WithStdin(os.Stdin), lab.WithSignals(sigs))
	if err != nil {
		return fmt.Errorf("lab exec: %w", err)
	}
	return withCode(code)
}
