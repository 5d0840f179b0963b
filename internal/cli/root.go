// Package cli implements the interlink command line: one file per command,
// each parsing flags, calling one library function and rendering its result.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// env is what every command receives: where to write and the context that is
// cancelled on Ctrl-C.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
}

// commands lists the constructors of the top-level subcommands. Each command
// file appends its constructor in an init function, so adding a command
// touches only its own file.
var commands []func(*env) *cobra.Command

// Main runs the interlink command line with args (without the program name)
// and returns the process exit code. It never panics on bad input: every
// error is printed as one line on stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	defer func() {
		// A panic is a bug, but the user still gets one line and exit 3
		// rather than a stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "interlink: internal error: %v (please report this)\n", r)
			code = ExitUnknown
		}
	}()
	err := root.ExecuteContext(ctx)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(stderr, "interlink: %s\n", oneLine(err.Error()))
		}
	}
	return exitCode(err)
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "interlink",
		Short: "Verify and measure a database cluster's interconnect and shared storage",
		Long: `interlink audits a node (check), proves path MTUs (pmtu, mesh, with agent on each
node), measures what the interconnect delivers (bench), and builds network-namespace
labs to try all of it on one machine (lab).

Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (bad usage or input, tool failure).`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown command %q; run 'interlink --help'", args[0])
			}
			return cmd.Help()
		},
		Args: cobra.ArbitraryArgs,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%s: %v (see 'interlink %s --help')", c.Name(), err, strings.TrimPrefix(c.CommandPath(), "interlink "))
	})
	for _, newCmd := range commands {
		c := newCmd(e)
		c.SilenceUsage = true
		c.SilenceErrors = true
		if c.Args == nil {
			c.Args = noArgs
		}
		root.AddCommand(c)
	}
	return root
}

// noArgs is cobra.NoArgs with an error that marks bad usage.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usageError("%s: unknown subcommand %q (see 'interlink %s --help')", cmd.Name(), args[0], cmd.Name())
		}
		return usageError("%s: unexpected argument %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// exactArgs is cobra.ExactArgs with an error that marks bad usage and names
// what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s: expected %s, got %d argument(s)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// oneLine keeps an error on one line: the contract is one clear line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
