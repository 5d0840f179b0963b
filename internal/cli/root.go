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

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// env is what every command receives: where to write and the context that is
// cancelled on Ctrl-C.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	args   []string // the command line, for the results history
}

// commands lists the constructors of the top-level subcommands. Each command
// file appends its constructor in an init function, so adding a command
// touches only its own file.
var commands []func(*env) *cobra.Command

// Main runs the interlink command line with args (without the program name)
// and returns the process exit code. It never panics on bad input: every
// error is printed as one line on stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	// Every write to stdout goes through one latch, so a result that could
	// not be written (a full disk) fails the command even where a renderer
	// printed as it went. A closed pipe never gets here: the first write
	// to it ends the process by SIGPIPE, silently, as a pipe's reader expects.
	out := textout.New(stdout)
	stdout = out
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, args: args}
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
	cmd, err := root.ExecuteContextC(ctx)
	err = notAgentHint(e, outputLost(cmd, err, out.Err()))
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(stderr, "interlink: %s\n", termtext.Clean(oneLine(err.Error())))
		}
	}
	return exitCode(err)
}

// outputLost makes a failed write to stdout the command's error (exit 3,
// one line): a verdict or success whose output was lost is no result. An
// error of the command itself, the write's own included, stands.
func outputLost(cmd *cobra.Command, err, werr error) error {
	var ee *exitError
	if werr == nil || (err != nil && !errors.As(err, &ee)) {
		return err
	}
	name := ""
	if cmd != nil && cmd.HasParent() {
		name = cmdPath(cmd) + ": "
	}
	return fmt.Errorf("%swrite output: %w", name, werr)
}

// NewRoot returns the interlink command tree writing to stdout and stderr,
// for generating man pages, completions and the README's command table
// from the same definitions as the help.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	return newRoot(&env{ctx: context.Background(), stdout: stdout, stderr: stderr})
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "interlink",
		Short: "Verify and measure a database cluster's interconnect and shared storage",
		Long: `interlink audits a node (check), proves path MTUs (pmtu, mesh, with agent on each
node), measures what the interconnect delivers (bench), and builds network-namespace
labs to try all of it on one machine (lab).

Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (bad usage or input, tool failure).`,
		Version:           buildVersion().String(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown command %q%s; run 'interlink --help'", args[0], suggestCommand(cmd, args[0]))
			}
			// No command is bad usage (exit 3), like any other missing
			// argument: the usage goes to stderr, where a script's log
			// keeps it, and stdout stays empty.
			cmd.SetOut(e.stderr)
			cmd.Usage()
			return &exitError{code: ExitUnknown}
		},
		Args: cobra.ArbitraryArgs,
	}
	root.SetVersionTemplate("interlink {{.Version}}\n")
	// --version without cobra's -v shorthand: -v means verbose to operators.
	root.Flags().Bool("version", false, "print the version and exit")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "interlink mseh --nodes x": cobra parses the flags of the
		// root, which has no --nodes; the typo in the command is the
		// mistake to report.
		if !c.HasParent() {
			if name := firstWord(e.args); name != "" {
				if sub, _, ferr := c.Find([]string{name}); ferr == nil && sub == c {
					return usageError("unknown command %q%s; run 'interlink --help'", name, suggestCommand(c, name))
				}
			}
		}
		return flagError(c, err)
	})
	root.SetHelpCommand(newHelpCmd(root))
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

// newHelpCmd is cobra's help command, except that a command it does not
// know is bad usage (one line, exit 3), as everywhere else: cobra's
// printed the root's usage and exited 0.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help provides help for any command in the application.",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageError("help: unknown command %q; run 'interlink --help'", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// flagError names the command (never the program twice), the flag, and
// the nearest known flag when the unknown one looks like a typo.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		msg += suggestFlag(c, name)
	}
	if c.HasParent() {
		path := cmdPath(c)
		return usageError("%s: %s (see 'interlink %s --help')", path, msg, path)
	}
	return usageError("%s (see 'interlink --help')", msg)
}

// firstWord is the first argument that is not a flag, "" when there is
// none (or when a "--" comes first).
func firstWord(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// noArgs is cobra.NoArgs with an error that marks bad usage.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usageError("%s: unknown subcommand %q (see '%s --help')", cmd.Name(), args[0], cmd.CommandPath())
		}
		return usageError("%s: unexpected argument %q", cmdPath(cmd), args[0])
	}
	return nil
}

// cmdPath names cmd as its usage errors do, without the program (which
// Execute's "interlink: " prefix already gives): "bench", "lab exec".
func cmdPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// exactArgs is cobra.ExactArgs with an error that marks bad usage and names
// what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s: expected %s, got %d argument(s)", cmdPath(cmd), what, len(args))
		}
		return nil
	}
}

// oneLine keeps an error on one line: the contract is one clear line.
// Main also cleans it (termtext.Clean): an error quotes what the user
// gave (a path, a DSN, a flag), and an escape sequence in it must not
// reach the terminal, whichever command forgot to clean it.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
