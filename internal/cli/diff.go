package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/drift"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/store"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newDiffCmd) }

// commandOf maps a schema to the command that writes it.
var commandOf = map[string]string{"interlink.check/v1": "check", "interlink.pmtu/v1": "pmtu", "interlink.mesh/v1": "mesh",
	"interlink.bench/v1": "bench", "interlink.ab/v1": "ab", "interlink.demo/v1": "lab demo",
	"interlink.cluster/v1": "cluster", awr.Schema: "awr", awr.DiffSchema: "awr diff"}

var idRE = regexp.MustCompile(`^#?[0-9]+$`)

const diffLong = `diff compares a result with a baseline of the same command and lists what changed:
mesh and pmtu paths whose verdict or path MTU differs, check findings that are new
(or gone, or changed severity), bench intervals and ab runs whose figures moved beyond
their noise (the 95 % confidence interval of the shift excludes zero; a run with too
few intervals or runs to reach 95 %, fewer than four a side, is listed as not judged),
fragments per message and path MTU.

A cluster run (interlink cluster --json) against a mesh result is its mesh: a
replica's mesh against the run it was made from says whether the replica gives
every path alike. Two cluster runs compare their meshes and each node's findings.
Two awr results (interlink awr FILE... --save) compare as 'interlink awr diff'
compares their reports: every metric per instance, a change where it is judged
better, worse or changed.

BASELINE and RESULT are a result id from 'interlink history' (12 or #12), a name
given with --save-as, or a --json file. Without RESULT, the newest saved result of
the baseline's command; without either, the newest saved result against the run of
the same command on the same host before it.

Exit 0 no change, 1 changed (better or worse: each change says which), 3 bad input
(unknown id or name, results of different commands, awr results of different
databases or releases, a file that is not a regular file or not a result, a history
file that is not one). Fit for cron and monitoring.`

func newDiffCmd(e *env) *cobra.Command {
	var (
		db     string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "diff [BASELINE] [RESULT]",
		Short: "What changed between a result and a baseline: paths, findings, metrics beyond their noise",
		Long:  diffLong,
		Example: `  interlink mesh --nodes nodes.txt --expect 9000 --save-as known-good
  interlink mesh --nodes nodes.txt --expect 9000 --save   # later, from cron
  interlink diff known-good          # the newest mesh against the baseline
  interlink diff                     # the newest result against its previous run
  interlink diff 12 15 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return usageError("diff: expected at most BASELINE and RESULT, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd.Context(), e, db, asJSON, args) },
	}
	addDBFlag(c.Flags(), &db)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.diff/v1)")
	return c
}

// runDiff resolves the baseline and the result (opening the history only
// when a reference needs it), compares them and prints the changes.
func runDiff(ctx context.Context, e *env, db string, asJSON bool, args []string) error {
	var st *store.Store
	history := func() (*store.Store, error) {
		if st == nil {
			var err error
			if st, err = openStore("diff", db, store.OpenRead); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	base, cur, err := diffRefs(ctx, args, history)
	if err != nil {
		return err
	}
	d, err := drift.Compare(base.Value, cur.Value)
	if err != nil {
		return usageError("diff: %v", err)
	}
	doc := drift.Doc{Schema: drift.Schema, Baseline: base, Result: cur, Diff: d}
	if asJSON {
		if err := report.JSON(e.stdout, doc); err != nil {
			return err
		}
	} else {
		if werr := doc.WriteText(e.stdout); werr != nil {
			return fmt.Errorf("diff: write report: %w", werr)
		}
	}
	if d.Verdict == drift.NoChange {
		return nil
	}
	return withCode(ExitWarning)
}

// diffRefs resolves the arguments to the baseline and the result.
func diffRefs(ctx context.Context, args []string, history func() (*store.Store, error)) (base, cur drift.Ref, err error) {
	switch len(args) {
	case 2:
		if base, err = resolveRef(ctx, args[0], history); err != nil {
			return
		}
		cur, err = resolveRef(ctx, args[1], history)
		return
	case 1:
		if base, err = resolveRef(ctx, args[0], history); err != nil {
			return
		}
		st, err := history()
		if err != nil {
			return base, cur, err
		}
		r, err := st.Latest(base.Command)
		if err != nil {
			return base, cur, usageError("diff: %s", termtext.Clean(err.Error()))
		}
		cur, err = fromRecord(r)
		return base, cur, err
	}
	st, err := history()
	if err != nil {
		return
	}
	r, err := st.Latest("")
	if err != nil {
		return base, cur, usageError("diff: %s: nothing saved yet (run a command with --save)", termtext.Clean(err.Error()))
	}
	if cur, err = fromRecord(r); err != nil {
		return
	}
	prev, err := st.Previous(r)
	if err != nil {
		return base, cur, usageError("diff: %s", termtext.Clean(err.Error()))
	}
	base, err = fromRecord(prev)
	return
}

// resolveRef reads a file when arg names one, else looks up an id or a
// baseline name in the history.
func resolveRef(ctx context.Context, arg string, history func() (*store.Store, error)) (drift.Ref, error) {
	if arg == "" {
		return drift.Ref{}, usageError("diff: an empty argument: want a result id, a name given with --save-as, or a --json file")
	}
	fi, err := os.Stat(arg)
	if err == nil && !fi.IsDir() {
		data, err := readResult(ctx, arg, new(bool))
		if err != nil {
			return drift.Ref{}, usageError("diff: %s", strings.TrimPrefix(err.Error(), "report: "))
		}
		v, schema, err := report.Decode(data)
		if err != nil {
			return drift.Ref{}, usageError("diff: %s: %s", termtext.Clean(arg), termtext.Clean(err.Error()))
		}
		return drift.Ref{File: arg, Command: commandOf[schema], Value: v}, nil
	}
	st, err := history()
	if err != nil {
		return drift.Ref{}, err
	}
	var r *store.Record
	if idRE.MatchString(arg) {
		id, perr := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
		if perr != nil {
			return drift.Ref{}, usageError("diff: %q: not a result id", arg)
		}
		r, err = st.Get(id)
	} else {
		r, err = st.ByName(arg)
	}
	if errors.Is(err, store.ErrNotFound) {
		file := "no file " + termtext.Clean(arg)
		if fi != nil && fi.IsDir() { // it was not "no file": say what it is
			file = termtext.Clean(arg) + " is a directory, not a result file"
		}
		return drift.Ref{}, usageError("diff: %s (and %s)", termtext.Clean(err.Error()), file)
	}
	if err != nil {
		return drift.Ref{}, usageError("diff: %s", termtext.Clean(err.Error()))
	}
	return fromRecord(r)
}

func fromRecord(r *store.Record) (drift.Ref, error) {
	v, _, err := report.Decode(r.Doc)
	if err != nil {
		return drift.Ref{}, usageError("diff: result %d in the history: %s", r.ID, termtext.Clean(err.Error()))
	}
	return drift.Ref{ID: r.ID, Name: r.Name, Command: r.Command, Host: r.Host, Time: r.Time, Value: v}, nil
}
