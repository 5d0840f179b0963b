package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/vm"
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
			return vm.Guest(e.ctx, args[0], os.Stdout)
		},
	}
}

func newLabCacheCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "The cache of VM nodes' kernels (" + vm.DefaultCacheDir + ")",
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Remove the cache of VM nodes' kernels and the KVM probe's result",
		Long: `clear removes ` + vm.DefaultCacheDir + ` (or $INTERLINK_VM_CACHE): the
kernels VM nodes boot, unpacked from Debian's packages, and the result of
the KVM probe. The next 'lab up' with a VM node fetches its kernel again.`,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := vm.ClearCache(); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "lab cache: %s cleared\n", vm.CacheDir())
			return nil
		},
	}
	c.AddCommand(clear)
	return c
}
