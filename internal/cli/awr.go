package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newAWRCmd) }

// maxAWRFiles bounds the reports of one run.
const maxAWRFiles = 64

// awrFlags are awr's flags.
type awrFlags struct {
	asJSON, listRules bool
	out               outputFlags
}

const awrLong = `awr reads AWR reports as awrrpt.sql (one instance) and awrgrpt.sql (the global RAC
report) write them, text or HTML, from 11.2, 12c, 18c/19c and later, and extracts the
header, the Load Profile and the cluster sections: Global Cache Load Profile (with Estd
Interconnect traffic), Global Cache Efficiency Percentages, the workload characteristics
(average cr and current block receive times), the gc wait events (2-way, 3-way, busy,
congested, lost, gc buffer busy), Interconnect Ping Latency Stats (500 B and 8 KiB per
target), Interconnect Throughput by Client, Interconnect Device Statistics, Dynamic
Remastering, and the blocks lost (the statistic gc blocks lost of Instance Activity
Stats; the lost-block waits are a second figure). A section a report does not have is
shown as absent, never as zero, and so is a figure without samples (n/a).

The findings are those of check (rule, severity, evidence, fix, source): lost blocks,
receive times and 8 KiB pings above their thresholds, device errors or drops, a public
interconnect, 3-way or congested transfers dominating, gc buffer busy dominating DB time.
'awr --rules' lists them with the documents their thresholds come from.

Reports are read as a stream in bounded memory; a report cut short, re-wrapped by a mail
client or printed with decimal commas (1.234,56) gives what it holds.

'awr diff BEFORE... -- AFTER...' compares reports from before a change with reports
from after it. Exit codes: 0 no finding above info, 1 warning, 2 critical, 3 a file is
unreadable, not a regular file or not an AWR report (Ctrl-C or SIGTERM ends a read
at once, exit 3).`

func newAWRCmd(e *env) *cobra.Command {
	var f awrFlags
	c := &cobra.Command{
		Use:   "awr FILE...",
		Short: "Read Oracle AWR reports (text or HTML), judge their cluster sections, compare before with after",
		Long:  awrLong,
		Example: `  interlink awr awrrpt_1_4410_4411.txt
  interlink awr awrrpt_1_*.html --json > awr.json
  interlink awr awrgrpt_4410_4411.html --html awr.html --save
  interlink awr diff before.txt -- after.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !f.listRules {
				return usageError("awr: expected one or more AWR report files (awrrpt or awrgrpt output, text or HTML)")
			}
			if len(args) > maxAWRFiles {
				return usageError("awr: %d files; at most %d at once", len(args), maxAWRFiles)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(e, cmd, args) },
	}
	fl := c.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (schema "+awr.Schema+")")
	fl.BoolVar(&f.listRules, "rules", false, "list the rules (id, severity, what each detects, source) and exit")
	f.out.add(fl)
	c.AddCommand(newAWRDiffCmd(e))
	return c
}

func (f *awrFlags) run(e *env, cmd *cobra.Command, args []string) error {
	if f.listRules {
		return awrRules(e, f.asJSON)
	}
	if err := f.out.check("awr"); err != nil {
		return err
	}
	if err := notInput("awr", "--html", f.out.html, args); err != nil {
		return err
	}
	reps, err := readAWR(cmd.Context(), "awr", args)
	if err != nil {
		return err
	}
	res := awr.Analyze(reps)
	if f.asJSON {
		err = report.JSON(e.stdout, res)
	} else {
		err = report.AWRText(e.stdout, res)
	}
	if err != nil {
		return fmt.Errorf("awr: write report: %w", err)
	}
	// The page's title is a command line a person may copy: each file
	// name quoted for the shell.
	if err := f.out.emit(e, "awr", shellq.Join(append([]string{"interlink", "awr"}, args...)...), res); err != nil {
		return err
	}
	return withCode(res.Summary.ExitCode)
}

// awrDiffFlags are awr diff's flags.
type awrDiffFlags struct {
	asJSON, anyDB bool
	conf          float64
	out           outputFlags
}

const awrDiffLong = `diff reads the reports before '--' as the state before a change and those after it
as the state after, matches instances by number, and prints every metric side by side:
the value before and after, the ratio after/before and a verdict.

With one report per side each figure is one sample: the ratio says how the two intervals
differed, not whether the change caused it, and the output says so. With two or more per
side (e.g. the same busy hour on several days), each metric gets the statistics of
'interlink ab': medians, the Hodges-Lehmann shift and ratio with their confidence
intervals, the Mann-Whitney p-value, and a verdict only where the interval reaches
--confidence (four reports a side for 95 %; fewer give no verdict and say so), excludes 0,
and the p-value, Holm-corrected across the metrics, is at most 1 - confidence.

Reports of different databases (DB ids) or of one database on different releases are
refused: their figures do not measure the same thing. With --any-db each database is
compared apart (its instances are matched only with its own) and the output groups the
instances by database; a database with reports on one side only is named, not compared.
A figure a report does not have, or has no samples for (a ping target pinged 0 times,
receive times with no block received), is left out of the comparison and the medians.

Exit codes: 0 nothing worse, 1 a metric with a direction (receive time, lost blocks,
pings, drops, transactions) is worse, 3 bad input (reports of different databases or
releases without --any-db among it).`

func newAWRDiffCmd(e *env) *cobra.Command {
	var f awrDiffFlags
	c := &cobra.Command{
		Use:   "diff BEFORE... -- AFTER...",
		Short: "Compare AWR reports from before a change with reports from after it",
		Long:  awrDiffLong,
		Example: `  interlink awr diff awrrpt_mtu1500.txt -- awrrpt_mtu9000.txt
  interlink awr diff w1-mon.html w1-tue.html w1-wed.html w1-thu.html -- w2-mon.html w2-tue.html w2-wed.html w2-thu.html --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAWRDiff(cmd.Context(), e, &f, cmd.ArgsLenAtDash(), args)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (schema "+awr.DiffSchema+")")
	fl.Float64Var(&f.conf, "confidence", 0.95, "confidence level of the intervals with several reports per side")
	fl.BoolVar(&f.anyDB, "any-db", false, "compare reports of different databases (DB ids) or releases, each database apart")
	f.out.add(fl)
	return c
}

// runAWRDiff reads the reports before and after dash, refuses sides that
// do not compare, and prints the comparison.
func runAWRDiff(ctx context.Context, e *env, f *awrDiffFlags, dash int, args []string) error {
	if dash < 1 || dash >= len(args) {
		return usageError("awr diff: expected BEFORE... -- AFTER... (reports before the change, '--', reports after it)")
	}
	if slices.Contains(args[dash:], "--") { // cobra takes the first only; the next read as a file
		return usageError("awr diff: '--' given twice: expected BEFORE... -- AFTER..., one '--' between the two sides")
	}
	if len(args) > maxAWRFiles {
		return usageError("awr diff: %d files; at most %d at once", len(args), maxAWRFiles)
	}
	if !(f.conf > 0.5 && f.conf < 1) {
		return usageError("awr diff: --confidence %g: want a level between 0.5 and 1 (0.95 for 95 %%)", f.conf)
	}
	if err := f.out.check("awr diff"); err != nil {
		return err
	}
	if err := notInput("awr diff", "--html", f.out.html, args); err != nil {
		return err
	}
	before, err := readAWR(ctx, "awr diff", args[:dash])
	if err != nil {
		return err
	}
	after, err := readAWR(ctx, "awr diff", args[dash:])
	if err != nil {
		return err
	}
	if err := awr.Comparable(before, after); err != nil && !f.anyDB {
		return usageError("awr diff: %s; compare reports of one database and release, or pass --any-db to compare each database apart", termtext.Clean(err.Error()))
	}
	d := awr.Compare(before, after, f.conf)
	if len(d.Instances) == 0 {
		return usageError("awr diff: no instance is in the reports on both sides (instances are matched by database and number)")
	}
	if f.asJSON {
		err = report.JSON(e.stdout, d)
	} else {
		err = report.AWRDiffText(e.stdout, d)
	}
	if err != nil {
		return fmt.Errorf("awr diff: write report: %w", err)
	}
	if err := f.out.emit(e, "awr diff", "interlink awr diff", d); err != nil {
		return err
	}
	if d.Worsened > 0 {
		return withCode(ExitWarning)
	}
	return nil
}

// readAWR parses each file; an unreadable file, one that is not a regular
// file or not an AWR report is bad input: one line, exit 3. The reads stop
// at their next read when ctx ends (Ctrl-C, SIGTERM).
func readAWR(ctx context.Context, cmd string, files []string) ([]awr.Report, error) {
	var reps []awr.Report
	for _, name := range files {
		f, err := readfile.Open(name)
		if err != nil {
			return nil, usageError("%s: %s", cmd, termtext.Clean(err.Error()))
		}
		r, err := awr.Parse(readfile.WithContext(ctx, f), name)
		f.Close()
		switch {
		case errors.Is(err, awr.ErrNotAWR):
			return nil, usageError("%s: %s is not an AWR report (no 'WORKLOAD REPOSITORY' title; awrrpt.sql or awrgrpt.sql output, text or HTML, is expected)", cmd, termtext.Clean(name))
		case ctx.Err() != nil:
			return nil, usageError("%s: %s: interrupted before the report was read", cmd, termtext.Clean(name))
		case err != nil:
			return nil, usageError("%s: %s: %s", cmd, termtext.Clean(name), termtext.Clean(err.Error()))
		}
		reps = append(reps, *r)
	}
	return reps, nil
}

func awrRules(e *env, asJSON bool) error {
	l := rules.Listing{Schema: "interlink.awr-rules/v1", Rules: awr.Rules()}
	if asJSON {
		return report.JSON(e.stdout, l)
	}
	for _, r := range l.Rules {
		sev := r.Severity.String()
		for _, a := range r.Also {
			sev += ", " + a.Severity.String() + " " + a.When
		}
		fmt.Fprintf(e.stdout, "%s  %s\n  %s\n  source: %s\n", r.ID, sev, r.Title, r.Source)
	}
	return nil
}
