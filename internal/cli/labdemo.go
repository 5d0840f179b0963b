package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/units"
)

func init() { labCommands = append(labCommands, newLabDemoCmd) }

// demoBinary is the interlink executable the demo runs in the lab's nodes;
// tests that run the CLI in-process point it at a built binary.
var demoBinary = os.Executable

func newLabDemoCmd(e *env) *cobra.Command {
	var (
		name, block string
		dur         time.Duration
		keep        bool
		asJSON      bool
		out         outputFlags
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: "The whole product in a minute: a jumbo cluster with one switch port left at 1500",
		Long: `demo builds a lab (three nodes whose hosts all say MTU 9000 on the interconnect,
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
the default --time.`,
		Example: `  interlink lab demo
  interlink lab demo --time 3s --json > demo.json
  interlink lab demo --keep`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dur < time.Second || dur > 5*time.Minute {
				return usageError("lab demo: --time %v: want 1s to 5m", dur)
			}
			size, err := units.ParseSize(block)
			if err != nil || size < 64 || size > 64<<10 {
				return usageError("lab demo: --block %q: want a size from 64 to 64K, e.g. 8K", block)
			}
			if cmd.Flags().Changed("name") {
				if err := lab.CheckName(name); err != nil {
					return usageError("lab demo: --name %v", err)
				}
			}
			opt := demo.Options{Lab: name, Time: dur, Block: int(size), Keep: keep}
			if err := opt.Validate(); err != nil {
				return usageError("lab demo: --name: %v", err)
			}
			if err := out.check("lab demo"); err != nil {
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
			res, err := demo.Run(e.ctx, opt)
			if res == nil {
				return fmt.Errorf("lab demo: %w", err)
			}
			if asJSON {
				if jerr := report.JSON(e.stdout, res); jerr != nil {
					return jerr
				}
			} else if werr := demo.Footer(e.stdout, res); werr != nil {
				return fmt.Errorf("lab demo: write report: %w", werr)
			}
			if herr := out.emit(e, "lab demo", "interlink lab demo", res); herr != nil {
				return herr
			}
			if errors.Is(err, demo.ErrInterrupted) {
				return withCode(ExitUnknown)
			}
			if err != nil {
				return fmt.Errorf("lab demo: %s", strings.TrimPrefix(err.Error(), "demo: "))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&name, "name", demo.Builtin, "name of the lab (its namespaces are il-NAME.*)")
	f.DurationVar(&dur, "time", demo.DefaultTime, "each blocks run (each TCP run takes half); shorter for a quicker demo")
	f.StringVar(&block, "block", "8K", "block size of the blocks runs")
	f.BoolVar(&keep, "keep", false, "leave the lab and its agents up and print how to explore it")
	f.BoolVar(&asJSON, "json", false, "print every result as one JSON document (schema interlink.demo/v1)")
	out.add(f)
	return c
}
