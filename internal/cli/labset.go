package cli

import (
	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/lab"
)

func init() { labCommands = append(labCommands, newLabSetCmd) }

func newLabSetCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "set NAME SWITCH|NODE:LINK KEY=VALUE...",
		Short: "Change a running lab: a switch's or a link's MTU, port MTU, rate, loss",
		Long: `set changes a lab while it runs, as a maintenance window changes a real
interconnect, validated like a topology file, recorded so that 'lab status' checks
it, and gone with 'lab down'. The prepare step of an 'interlink ab' experiment.

  SWITCH mtu=N        the switch and every link and port on it (all nodes at N)
  SWITCH port_mtu=N   every port of the switch; the nodes keep their MTU
  SWITCH rate=R       shape every link on the switch (rate=0: unshaped)
  SWITCH loss=P%      every link on the switch loses P% of its frames each way (loss=0: none)
  NODE:LINK mtu=N     the node's side of one link
  NODE:LINK port_mtu=N  the switch port behind it (below the node's MTU: a blackhole)
  NODE:LINK rate=R    shape one link
  NODE:LINK loss=P%   its switch port drops P% of the frames at random, each way

Examples:
  interlink lab set demo ic mtu=1500
  interlink lab set demo node3:eth1 port_mtu=9000
  interlink lab set demo ic rate=1gbit
  interlink lab set demo node2:eth1 loss=1%

Prints the lab's status afterwards; exit 0 when the lab is up as described.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 {
				return usageError("%s: expected NAME, a SWITCH or NODE:LINK, and KEY=VALUE settings", cmdPath(cmd))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			settings, err := lab.ParseSettings(args[1], args[2:])
			if err != nil {
				return labSettingsErr(err)
			}
			if _, err := lab.Set(args[0], settings); err != nil {
				return labSetErr(args[0], err)
			}
			s, err := lab.Inspect(args[0])
			if err != nil {
				return labNotUp(args[0], err)
			}
			if err := renderLabs(e.stdout, asJSON, s); err != nil {
				return err
			}
			if s.State != lab.StateUp {
				return withCode(ExitWarning)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the lab's status as JSON (schema interlink.lab/v1)")
	return c
}
