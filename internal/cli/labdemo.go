package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/units"
)

func init() { labCommands = append(labCommands, newLabDemoCmd) }

// demoBinary is the interlink executable the demo runs in the lab's nodes;
// tests that run the CLI in-process point it at a built binary.
var demoBinary = os.Executable

// labDemoFlags are lab demo's flags.
type labDemoFlags struct {
	name, block string
	dur         time.Duration
	keep        bool
	asJSON      bool
	out         outputFlags
}

const labDemoLong = `demo builds a lab (three nodes whose hosts all say MTU 9000 on the interconnect,
node3's switch port left at 1500, and a public network honestly at 1500), starts
'interlink agent' on every node, and then runs the real commands inside the nodes:

  interlink check --interconnect eth1   on every node: the hosts look fine
  interlink mesh --expect 9000          every path to and from node3 is a blackhole at 1500
  interlink bench --mode blocks         8 KiB blocks over a 9000 and a 1500 path, side by side
  interlink bench --mode tcp            one TCP stream over each, for contrast
  interlink bench --mode gc             Cache Fusion across all three: every block
                                        through node3's port lost, as AWR would say

and ends with what an operator should do. Every figure is measured in the run.
The lab is removed at the end (and on Ctrl-C); --keep leaves it up to explore
with 'interlink lab exec'. Needs CAP_NET_ADMIN (root). Takes about a minute with
the default --time.`

func newLabDemoCmd(e *env) *cobra.Command {
	var f labDemoFlags
	c := &cobra.Command{
		Use:   "demo",
		Short: "The whole product in a minute: a jumbo cluster with one switch port left at 1500",
		Long:  labDemoLong,
		Example: `  interlink lab demo
  interlink lab demo --time 3s --json > demo.json
  interlink lab demo --keep`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLabDemo(e, &f, cmd.Flags().Changed("name"))
		},
	}
	f.bind(c.Flags())
	return c
}

func (d *labDemoFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&d.name, "name", demo.Builtin, "name of the lab (its namespaces are il-NAME.*)")
	f.DurationVar(&d.dur, "time", demo.DefaultTime, "each blocks run (each TCP run takes half); shorter for a quicker demo")
	f.StringVar(&d.block, "block", "8K", "block size of the blocks runs")
	f.BoolVar(&d.keep, "keep", false, "leave the lab and its agents up and print how to explore it")
	f.BoolVar(&d.asJSON, "json", false, "print every result as one JSON document (schema interlink.demo/v1)")
	d.out.add(f)
}

// options checks the flags into the demo's options; nameSet says --name
// was given (the default name is the built-in one).
func (d *labDemoFlags) options(nameSet bool) (demo.Options, error) {
	if d.dur < time.Second || d.dur > 5*time.Minute {
		return demo.Options{}, usageError("lab demo: --time %v: want 1s to 5m", d.dur)
	}
	size, err := units.ParseSize(d.block)
	if err != nil || size < 64 || size > 64<<10 {
		return demo.Options{}, usageError("lab demo: --block %q: want a size from 64 to 64K, e.g. 8K", d.block)
	}
	if nameSet {
		if err := lab.CheckName(d.name); err != nil {
			return demo.Options{}, usageError("lab demo: --name %v", err)
		}
	}
	opt := demo.Options{Lab: d.name, Time: d.dur, Block: int(size), Keep: d.keep}
	if err := opt.Validate(); err != nil {
		return opt, usageError("lab demo: --name: %v", err)
	}
	if err := d.out.check("lab demo"); err != nil {
		return opt, err
	}
	return opt, nil
}

// runLabDemo checks the flags and the privilege, runs the demo showing
// its sections as they finish, and prints the result.
func runLabDemo(e *env, f *labDemoFlags, nameSet bool) error {
	opt, err := f.options(nameSet)
	if err != nil {
		return err
	}
	if err := lab.CheckPrivilege(); errors.Is(err, lab.ErrPrivilege) {
		return fmt.Errorf("lab demo: %w", lab.ErrPrivilege) // one line, without how it was found out
	} else if err != nil {
		return fmt.Errorf("lab demo: %w", err)
	}
	bin, err := demoBinary()
	if err != nil {
		return fmt.Errorf("lab demo: find the interlink binary: %w", err)
	}
	opt.Binary = bin
	demoObservers(e, f.asJSON, &opt)
	res, err := demo.Run(e.ctx, opt)
	if res == nil {
		return fmt.Errorf("lab demo: %w", err)
	}
	if f.asJSON {
		if jerr := report.JSON(e.stdout, res); jerr != nil {
			return jerr
		}
	} else if werr := demo.Footer(e.stdout, res); werr != nil {
		return fmt.Errorf("lab demo: write report: %w", werr)
	}
	if herr := f.out.emit(e, "lab demo", "interlink lab demo", res); herr != nil {
		return herr
	}
	if errors.Is(err, demo.ErrInterrupted) {
		return withCode(ExitUnknown)
	}
	if err != nil {
		return fmt.Errorf("lab demo: %s", strings.TrimPrefix(err.Error(), "demo: "))
	}
	return nil
}

// demoObservers sets opt's progress line (on a TTY) and, in text, prints
// the header and each section as it finishes; one lock keeps the two
// from interleaving.
func demoObservers(e *env, asJSON bool, opt *demo.Options) {
	tty := showProgress(e, asJSON)
	var mu sync.Mutex
	clear := func() {
		if tty {
			fmt.Fprint(e.stderr, "\r\033[K")
		}
	}
	if tty {
		opt.Progress = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			clear()
			if msg != "" {
				fmt.Fprint(e.stderr, msg)
			}
		}
	}
	if !asJSON {
		demo.Header(e.stdout)
		opt.Section = func(s demo.Section, r *demo.Result) {
			mu.Lock()
			defer mu.Unlock()
			clear()
			demo.Render(e.stdout, s, r)
		}
	}
}
