package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newReportCmd) }

// maxResultBytes bounds one result file: a demo's JSON is under 100 KiB, a
// 200-node mesh a few MiB.
const maxResultBytes = 64 << 20

func newReportCmd(e *env) *cobra.Command {
	var out, title string
	c := &cobra.Command{
		Use:   "report RESULT.json... -o FILE",
		Short: "Render saved --json results as one self-contained HTML report",
		Long: `report reads results saved with --json (check, pmtu, mesh, bench, bench --mode gc, ab, lab demo, cluster; each
file's "schema" field says which) and writes them, in the order given, as one HTML file:
no scripts, nothing fetched (it works offline and prints as shown), charts drawn as SVG:
the mesh as a heatmap with the verdict of every path, bench intervals as time series
and the round-trip distribution as a CDF, fragments and CPU per message as bars, an
A/B experiment's runs in order with its verdict and interval, a gc run's pairs as heatmaps
(blocks/s, 2-way and 3-way receive times, lost blocks) with AWR's tables, check findings grouped
by severity with evidence and fix. "-" reads a result from standard input.

The same report comes straight from a command with --html FILE.

Exit 0 when the report was written; 3 when a file is unreadable, not JSON or not an
interlink result (nothing is written then).`,
		Example: `  interlink mesh --nodes nodes.txt --expect 9000 --json > mesh.json
  interlink bench node2 --mode blocks --token-file /etc/interlink/token --json > blocks.json
  interlink report mesh.json blocks.json -o interconnect.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("report: expected one or more RESULT.json files (the --json output of check, pmtu, mesh, bench, ab, lab demo or cluster)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError("report: -o FILE is required (where to write the HTML)")
			}
			if err := writableDir(out); err != nil {
				return usageError("report: -o %s: %v", termtext.Clean(out), err)
			}
			if err := notInput("report", "-o", out, args); err != nil {
				return err
			}
			p := report.Page{Title: title, Generated: time.Now()}
			stdin := false
			for _, name := range args {
				data, err := readResult(cmd.Context(), name, &stdin)
				if err != nil {
					return err
				}
				v, _, err := report.Decode(data)
				if err != nil {
					return usageError("report: %s: %s", termtext.Clean(name), termtext.Clean(err.Error()))
				}
				p.Results = append(p.Results, v)
				p.Sources = append(p.Sources, name)
			}
			if p.Title == "" {
				p.Title = "interlink report: " + strings.Join(p.Sources, ", ")
			}
			if err := writeHTML(out, p); err != nil {
				return fmt.Errorf("report: write %s: %w", termtext.Clean(out), err)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the HTML file to write")
	c.Flags().StringVar(&title, "title", "", "the report's title (default: the files' names)")
	return c
}

// readResult reads one result file ("-": standard input, once), bounded;
// a path must be a regular file (a FIFO, a device or a directory is
// refused before a byte is read). It returns when ctx ends (Ctrl-C,
// SIGTERM) even while a read blocks: standard input left open, a hung NFS
// server.
func readResult(ctx context.Context, name string, stdin *bool) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		if *stdin {
			return nil, usageError("report: standard input (-) given twice")
		}
		*stdin = true
		data, err = readfile.ReadLimitedContext(ctx, os.Stdin, "standard input", maxResultBytes)
	} else {
		data, err = readfile.ReadAllContext(ctx, name, maxResultBytes)
	}
	switch {
	case errors.Is(err, readfile.ErrTooLarge):
		return nil, usageError("report: %s is larger than %d MiB; not a result file", termtext.Clean(name), maxResultBytes>>20)
	case ctx.Err() != nil:
		return nil, usageError("report: %s: interrupted before it was read", termtext.Clean(name))
	case errors.Is(err, readfile.ErrNotRegular):
		return nil, usageError("report: %s; not a result file", termtext.Clean(err.Error()))
	case err != nil:
		return nil, usageError("report: %s", termtext.Clean(err.Error()))
	}
	return data, nil
}
