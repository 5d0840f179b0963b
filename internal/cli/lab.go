package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/textout"
)

func init() { commands = append(commands, newLabCmd) }

// labCommands lists further `lab` subcommands; a file that adds one (such as
// `lab demo`) appends its constructor in an init function.
var labCommands []func(*env) *cobra.Command

// LabDoc is the JSON document of `lab up`, `lab status` and `lab list`.
type LabDoc = lab.Doc

func newLabDoc() *LabDoc { return lab.NewDoc() }

func newLabCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "Build network-namespace labs: nodes, switches, routers, MTUs, rates",
		Long: `lab builds a small cluster from network namespaces on this machine: nodes,
switches (bridges), routers, links with their own MTU, switch-port MTU and
rate. Nothing on the host changes; 'lab down' removes everything, also after
a crash. Needs CAP_NET_ADMIN (root).

Built-in topologies (see 'interlink lab list', 'interlink lab show NAME'):
` + builtinNames() + ".",
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	for _, sub := range []func(*env) *cobra.Command{newLabUpCmd, newLabDownCmd, newLabStatusCmd, newLabListCmd, newLabShowCmd, newLabExecCmd} {
		c.AddCommand(sub(e))
	}
	for _, sub := range labCommands {
		c.AddCommand(sub(e))
	}
	for _, sub := range c.Commands() {
		sub.SilenceUsage, sub.SilenceErrors = true, true
		if sub.Args == nil {
			sub.Args = noArgs
		}
	}
	return c
}

func newLabUpCmd(e *env) *cobra.Command {
	var asJSON bool
	var name, kernel, modules string
	c := &cobra.Command{
		Use:   "up FILE|BUILTIN",
		Short: "Build a lab from a topology file or a built-in (replaces a lab of the same name)",
		Args:  exactArgs(1, "a topology FILE or BUILTIN name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every flag is checked before anything is read or built: an
			// empty --name must not fall back to (and replace) the file's lab.
			named := cmd.Flags().Changed("name")
			if named {
				if err := lab.CheckName(name); err != nil {
					return usageError("lab up: --name %v", err)
				}
			}
			t, err := lab.Load(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			if named {
				t.Name = name
			}
			if kernel != "" || modules != "" {
				if kernel == "" {
					return usageError("lab up: --modules goes with --kernel")
				}
				if err := t.SetKernel(kernel, modules); err != nil {
					return usageError("lab up: --kernel: %v", err)
				}
			}
			var s *lab.Status // read back before another process may take the name
			if _, err := lab.Up(e.ctx, t, lab.WithStatus(&s), lab.WithLog(e.stderr)); err != nil {
				return err
			}
			if s == nil {
				if s, err = lab.Inspect(t.Name); err != nil {
					return err
				}
			}
			if err := renderLabs(e.stdout, asJSON, s); err != nil {
				return err
			}
			// Read back damaged: the same WARNING lab status gives it.
			if s.State != lab.StateUp {
				return withCode(ExitWarning)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.lab/v1)")
	c.Flags().StringVar(&name, "name", "", "name the lab NAME instead of the file's name (run a built-in twice)")
	c.Flags().StringVar(&kernel, "kernel", "", "boot every VM node with this kernel image (bzImage) instead of the topology's")
	c.Flags().StringVar(&modules, "modules", "", "with --kernel: its modules tree, /lib/modules/RELEASE (not needed when virtio is built in)")
	return c
}

func newLabDownCmd(e *env) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "down NAME|--all",
		Short: "Remove a lab: its processes, namespaces, links and state",
		Args: func(cmd *cobra.Command, args []string) error {
			if all && len(args) > 0 || !all && len(args) != 1 {
				return usageError("%s: expected a lab NAME or --all", cmdPath(cmd))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if all {
				var err error
				if names, err = lab.Labs(); err != nil {
					return err
				}
			}
			var errs []error
			for _, n := range names {
				err := lab.Down(n)
				switch {
				case errors.Is(err, lab.ErrNotFound):
					fmt.Fprintf(e.stdout, "lab %s: not up, nothing to remove\n", n)
				case err != nil:
					errs = append(errs, err)
				default:
					fmt.Fprintf(e.stdout, "lab %s: down\n", n)
				}
			}
			return errors.Join(errs...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "remove every lab recorded in the state directory")
	return c
}

func newLabStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show a lab (or all labs) as the kernel has it: nodes, links, addresses, MTUs, rates",
		Long: `status reads the lab from the kernel and compares it with its topology.
Exit 0 when every lab shown is up as described, 1 when one is incomplete or
damaged, 3 when there is no such lab.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("%s: expected at most one lab NAME", cmdPath(cmd))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if len(names) == 0 {
				var err error
				if names, err = lab.Labs(); err != nil {
					return err
				}
			}
			var labs []*lab.Status
			for _, n := range names {
				s, err := lab.Inspect(n)
				if err != nil {
					return labNotUp(n, err)
				}
				labs = append(labs, s)
			}
			if err := renderLabs(e.stdout, asJSON, labs...); err != nil {
				return err
			}
			for _, s := range labs {
				if s.State != lab.StateUp {
					return withCode(ExitWarning)
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.lab/v1)")
	return c
}

func newLabListCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the built-in topologies and the labs that are up",
		RunE: func(cmd *cobra.Command, args []string) error {
			doc := newLabDoc()
			doc.Builtins = lab.Builtins()
			names, err := lab.Labs()
			if err != nil {
				return err
			}
			for _, n := range names {
				s, err := lab.Inspect(n)
				if err != nil {
					// Without privilege (or with a damaged record) the
					// lab is still listed, its state unknown.
					s = &lab.Status{Name: n, State: "unknown: " + err.Error()}
				}
				doc.Labs = append(doc.Labs, s)
			}
			if asJSON {
				return report.JSON(e.stdout, doc)
			}
			w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "BUILT-IN\tDESCRIPTION")
			for _, b := range doc.Builtins {
				fmt.Fprintf(w, "%s\t%s\n", b.Name, b.Description)
			}
			w.Flush()
			fmt.Fprintln(e.stdout)
			if len(doc.Labs) == 0 {
				fmt.Fprintln(e.stdout, "no labs are up")
				return nil
			}
			w = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "LAB\tSTATE\tNODES\tFROM")
			for _, s := range doc.Labs {
				nodes := make([]string, len(s.Nodes))
				for i, n := range s.Nodes {
					nodes[i] = n.Name
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, s.State, strings.Join(nodes, ","), s.File)
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.lab/v1)")
	return c
}

func newLabShowCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "show BUILTIN",
		Short: "Print a built-in topology file (to copy and change)",
		Args:  exactArgs(1, "a BUILTIN name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := lab.BuiltinYAML(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			_, err = e.stdout.Write(data)
			return err
		},
	}
}

// renderLabs prints lab statuses as text or as one JSON document.
func renderLabs(w io.Writer, asJSON bool, labs ...*lab.Status) error {
	if asJSON {
		doc := newLabDoc()
		doc.Labs = append(doc.Labs, labs...)
		return report.JSON(w, doc)
	}
	if len(labs) == 0 {
		fmt.Fprintln(w, "no labs are up")
		return nil
	}
	tw := textout.New(w)
	for i, s := range labs {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		s.WriteText(tw)
	}
	return tw.Err()
}

// builtinNames lists the built-in topologies for the help text.
func builtinNames() string {
	var names []string
	for _, b := range lab.Builtins() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}
