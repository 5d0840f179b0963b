package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/vm/cache"
	"github.com/interlink/interlink/internal/vm/guest"
)

func init() { labCommands = append(labCommands, newLabGuestCmd, newLabCacheCmd) }

// newLabGuestCmd is the guest side of a VM node: the init of the guest's
// initramfs runs it (hidden: it is not for people).
func newLabGuestCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:    "guest CONFIG",
		Short:  "Run as a VM node's guest side (started by the guest's init)",
		Hidden: true,
		Args:   exactArgs(1, "the guest's CONFIG file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return guest.Run(e.ctx, args[0], os.Stdout)
		},
	}
}

func newLabCacheCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "The cache of VM nodes' kernels (" + cache.DefaultDir + ")",
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Remove the cache of VM nodes' kernels and the KVM probe's result",
		Long: `clear removes ` + cache.DefaultDir + ` (or $INTERLINK_VM_CACHE): the
kernels VM nodes boot, unpacked from Debian's packages, and the result of
the KVM probe. The next 'lab up' with a VM node fetches its kernel again.
A cache on a path others can write is refused and left alone (one line
names the directory at fault), as 'lab up' refuses to boot from it.`,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cache.Clear(); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "lab cache: %s cleared\n", cache.Path())
			return nil
		},
	}
	c.AddCommand(clear)
	return c
}
