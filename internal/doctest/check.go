package doctest

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/cli"
	"github.com/interlink/interlink/internal/units"
)

// sizeFlags and rateFlags are string flags whose values internal/units
// parses, by flag name (ab's --expect is not a size).
var (
	sizeFlags = map[string]bool{"len": true, "block": true, "request": true, "size": true, "expect": true, "max": true}
	rateFlags = map[string]bool{"rate": true, "max-rate": true, "link-rate": true}
)

// CheckCommand parses args (an interlink command line without the
// program name) as interlink would, without running anything: the
// command exists and is runnable, every flag exists for it and its value
// parses (typed flags by pflag, sizes and rates by internal/units), and
// the positional arguments are what the command accepts. The interlink
// commands it runs are checked too: 'lab exec NAME NODE -- interlink ...',
// and ab's arms and prepare steps.
func CheckCommand(args []string) error {
	root := cli.NewRoot(io.Discard, io.Discard)
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	c.InitDefaultHelpFlag()
	if err := c.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", c.CommandPath(), err)
	}
	pos := c.Flags().Args()
	if help, _ := c.Flags().GetBool("help"); help {
		return nil
	}
	if c == root && len(pos) > 0 {
		return fmt.Errorf("unknown command %q", pos[0])
	}
	if !c.Runnable() {
		return fmt.Errorf("%s is not a command by itself", c.CommandPath())
	}
	if err := c.ValidateArgs(pos); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	var errs []string
	c.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		switch {
		case sizeFlags[f.Name] && c.Name() != "ab":
			if _, err := units.ParseSize(v); err != nil {
				errs = append(errs, fmt.Sprintf("--%s %s: %v", f.Name, v, err))
			}
		case rateFlags[f.Name] && v != "auto":
			if _, err := units.ParseRate(v); err != nil {
				errs = append(errs, fmt.Sprintf("--%s %s: %v", f.Name, v, err))
			}
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", c.CommandPath(), strings.Join(errs, "; "))
	}
	return checkNested(c, pos)
}

// checkNested checks the interlink commands that c runs.
func checkNested(c *cobra.Command, pos []string) error {
	var nested [][]string
	switch c.CommandPath() {
	case "interlink lab exec":
		// 'lab exec' takes its arguments as they come (the command's
		// flags are not its own), so the -- stays among them.
		if len(pos) > 2 {
			cmd := pos[2:]
			if cmd[0] == "--" {
				cmd = cmd[1:]
			}
			nested = append(nested, cmd)
		}
	case "interlink ab":
		if dash := c.Flags().ArgsLenAtDash(); dash >= 0 {
			nested = append(nested, pos[dash:])
		}
		for _, name := range []string{"a", "b", "a-prepare", "b-prepare"} {
			v, _ := c.Flags().GetString(name)
			cmds, err := SimpleCommands(v)
			if err != nil {
				return fmt.Errorf("ab --%s: %w", name, err)
			}
			nested = append(nested, cmds...)
		}
	}
	for _, words := range nested {
		if len(words) == 0 || !IsInterlink(words[0]) || Abridged(words) {
			continue
		}
		if err := CheckCommand(words[1:]); err != nil {
			return fmt.Errorf("in %s: %w", c.CommandPath(), err)
		}
	}
	return nil
}

// Flags returns the names of every flag of every command of the tree.
func Flags() map[string]bool {
	known := map[string]bool{"version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.NewRoot(io.Discard, io.Discard))
	return known
}
