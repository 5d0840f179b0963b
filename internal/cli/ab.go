package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/ab"
)

func init() { commands = append(commands, newABCmd) }

// abFlags are ab's flags; spec collects those that go straight into it.
type abFlags struct {
	spec                           ab.Spec
	aCmd, bCmd, order              string
	metrics, expects               []string
	asJSON                         bool
	runTimeout, prepTimeout, total time.Duration
	out                            outputFlags
}

// abLong is ab's help text, which lists the metric names ab knows.
func abLong() string {
	known := ab.KnownNames()
	var names []string
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	var help strings.Builder
	for _, n := range names {
		fmt.Fprintf(&help, "  %-28s %s\n", n, known[n])
	}
	return `Run two arms of an experiment interleaved (ABBA blocks, or randomised pairs) after
discarded warm-up runs, take metrics from every run, and say per metric whether B differs
from A, by how much, and with what confidence (Hodges-Lehmann shift and ratio with their
confidence intervals, Mann-Whitney p-value), flagging drift over the run order and outliers.

The metrics an --expect names (else the first metric: the first --metric, or the mode's
headline figure) are the experiment's question, judged at --confidence; the others are
secondary and differ only where their p-value, Holm-corrected across them, is at most
1 - confidence. No metric is called better or worse from an interval that could not reach
--confidence: with 2 runs per arm it is a 66.7 % one at most, with 3 a 90 % one; the output
then labels it with its level and says how many runs per arm would reach (4 for 95 %).
Where an interval includes 0, the output says how wide it is and how many runs per arm
would narrow it to +-1 %: N * (half-width / 1)^2, from that same interval.

With '-- COMMAND...' both arms run the same command and differ by --a-prepare/--b-prepare,
shell commands run whenever the arm changes (e.g. 'interlink lab set demo ic mtu=1500');
with --a and --b they run different commands (shell command lines).

Metrics (--metric, repeatable): a name interlink knows from its own JSON (interlink's
commands are run with --json), NAME=json:PATH for any program's JSON, NAME=REGEX for the
first capture group of REGEX over the output (e.g. 'tps=tps = ([0-9.]+)'), or wall.
A trailing + or - on NAME says higher or lower is better. Without --metric: bench's main
figures for its mode, or the wall time of any other command. Known names:
` + help.String() + `
Exit codes: 0 every --expect holds (or none was given), 1 inconclusive or cut short,
2 an --expect is contradicted, 3 bad usage or a failed run or prepare step.`
}

func newABCmd(e *env) *cobra.Command {
	var f abFlags
	c := &cobra.Command{
		Use:   "ab [flags] (-- COMMAND... | --a CMD --b CMD)",
		Short: "A/B experiment: two arms run interleaved, statistics, a verdict",
		Long:  abLong(),
		Example: `  interlink ab --runs 8 --a-prepare 'interlink lab set demo ic mtu=1500' \
      --b-prepare 'interlink lab set demo ic mtu=9000' --expect 'blocks_per_sec: B > A' \
      -- interlink bench 198.18.10.2 --mode blocks --time 5s --token-file /run/token
  interlink ab --runs 10 --metric 'tps=tps = ([0-9.]+)' \
      --a 'pgbench -n -T 30 -c 8 db_a' --b 'pgbench -n -T 30 -c 8 db_b'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(e, &f, cmd.ArgsLenAtDash(), args) },
	}
	f.bind(c.Flags())
	return c
}

func (f *abFlags) bind(fs *pflag.FlagSet) {
	fs.IntVar(&f.spec.Runs, "runs", 6, "measured runs per arm")
	fs.IntVar(&f.spec.Warmup, "warmup", 1, "discarded warm-up runs per arm, before the measured ones")
	fs.StringVar(&f.spec.A.Prepare, "a-prepare", "", "shell command that switches to arm A's configuration")
	fs.StringVar(&f.spec.B.Prepare, "b-prepare", "", "shell command that switches to arm B's configuration")
	fs.StringVar(&f.aCmd, "a", "", "arm A's command line (shell), with --b")
	fs.StringVar(&f.bCmd, "b", "", "arm B's command line (shell), with --a")
	fs.StringArrayVar(&f.metrics, "metric", nil, "NAME, NAME=json:PATH or NAME=REGEX (repeatable)")
	fs.StringArrayVar(&f.expects, "expect", nil, "'METRIC: B > A', 'METRIC: B < 0.9x A' (repeatable): exit 2 if contradicted")
	fs.StringVar(&f.order, "order", "abba", "abba or random (pairs in random order)")
	fs.Int64Var(&f.spec.Seed, "seed", 0, "seed for --order random (default: from the clock, printed in --json)")
	fs.Float64Var(&f.spec.Confidence, "confidence", 0.95, "confidence level of the intervals")
	fs.BoolVar(&f.spec.KeepGoing, "keep-going", false, "leave failed runs out and go on (default: stop at the first)")
	fs.DurationVar(&f.runTimeout, "run-timeout", 10*time.Minute, "stop a run that takes longer")
	fs.DurationVar(&f.prepTimeout, "prepare-timeout", 2*time.Minute, "stop a prepare step that takes longer")
	fs.DurationVar(&f.total, "max-time", 2*time.Hour, "start no run after this long; the result says it was cut")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (schema interlink.ab/v1)")
	f.out.add(fs)
}

// runAB builds the experiment from the flags, runs it (a second Ctrl-C
// ends the current run too), prints it and maps its verdict to the exit.
func runAB(e *env, f *abFlags, dash int, args []string) error {
	spec, err := f.experiment(dash, args)
	if err != nil {
		return err
	}
	if err := f.out.check("ab"); err != nil {
		return err
	}
	abort := make(chan struct{})
	stopSignals := secondInterrupt(e, abort)
	defer stopSignals()
	r := &ab.Runner{Spec: spec, Abort: abort}
	if showProgress(e, f.asJSON) {
		r.Progress = func(done []ab.Run, total int) { abProgress(e, done, total) }
	}
	res, err := r.Execute(e.ctx)
	if res == nil {
		return usageError("ab: %v", err)
	}
	if f.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return fmt.Errorf("ab: encode JSON: %w", jerr)
		}
	} else {
		if werr := ab.WriteText(e.stdout, res); werr != nil {
			return fmt.Errorf("ab: write report: %w", werr)
		}
	}
	if herr := f.out.emit(e, "ab", "interlink ab", res); herr != nil {
		return herr
	}
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	return withCode(verdictCode(res.Verdict))
}

// experiment checks the arms' commands (after '--', or --a and --b),
// metrics, expectations and limits into the spec the runner runs.
func (f *abFlags) experiment(dash int, args []string) (ab.Spec, error) {
	spec := f.spec
	switch {
	case dash < 0 && len(args) > 0:
		return spec, usageError("ab: put the command after '--' (interlink ab [flags] -- COMMAND...), or use --a and --b")
	case len(args) > 0 && (f.aCmd != "" || f.bCmd != ""):
		return spec, usageError("ab: give either '-- COMMAND...' or --a and --b, not both")
	case len(args) > 0:
		spec.A.Command, spec.B.Command = args, slices.Clone(args)
	case f.aCmd == "" || f.bCmd == "":
		return spec, usageError("ab: give the command after '--', or both --a CMD and --b CMD")
	default:
		spec.A.Command, spec.A.Shell = splitCommand(f.aCmd)
		spec.B.Command, spec.B.Shell = splitCommand(f.bCmd)
	}
	spec.A.Name, spec.B.Name = "A", "B"
	spec.Order = ab.Order(f.order)
	spec.RunTimeout, spec.PrepareTimeout, spec.MaxTime = f.runTimeout, f.prepTimeout, f.total
	for _, m := range f.metrics {
		pm, err := ab.ParseMetric(m)
		if err != nil {
			return spec, usageError("ab: %s", strings.TrimPrefix(err.Error(), ab.ErrSpec.Error()+": "))
		}
		spec.Metrics = append(spec.Metrics, pm)
	}
	for _, x := range f.expects {
		ex, err := ab.ParseExpect(x)
		if err != nil {
			return spec, usageError("ab: %s", strings.TrimPrefix(err.Error(), ab.ErrSpec.Error()+": "))
		}
		spec.Expect = append(spec.Expect, ex)
	}
	// The spec takes 0 as "the default"; on the command line 0 is a value,
	// and a wrong one (--runs 0 ran 6 runs, --confidence 0 judged at 95 %).
	if spec.Runs == 0 {
		return spec, usageError("ab: --runs 0: want 2 to %d runs per arm", ab.MaxRuns)
	}
	if spec.Confidence == 0 {
		return spec, usageError("ab: --confidence 0: want a level between 0.5 and 1, e.g. 0.95")
	}
	if f.runTimeout <= 0 || f.prepTimeout <= 0 || f.total <= 0 {
		return spec, usageError("ab: --run-timeout, --prepare-timeout and --max-time must be positive")
	}
	if err := spec.Validate(); err != nil {
		return spec, usageError("ab: %s", strings.TrimPrefix(err.Error(), ab.ErrSpec.Error()+": "))
	}
	return spec, nil
}

// splitCommand returns a command line as an argv when it is plain words
// (so interlink's own commands are recognised and given --json), or as
// one shell command line when it uses quoting or shell syntax.
func splitCommand(s string) ([]string, bool) {
	if strings.ContainsAny(s, "'\"\\$`|&;<>(){}*?[]~#!\n") {
		return []string{s}, true
	}
	return strings.Fields(s), false
}

// verdictCode maps an experiment's verdict to the exit code.
func verdictCode(v ab.Verdict) int {
	switch v {
	case ab.VerdictOK:
		return ExitOK
	case ab.VerdictWarning:
		return ExitWarning
	case ab.VerdictCritical:
		return ExitCritical
	default:
		return ExitUnknown
	}
}

// secondInterrupt closes abort on a Ctrl-C or SIGTERM that arrives after
// the command's context was cancelled by the first: the first stops the
// experiment after the current run, the second ends that run too.
func secondInterrupt(e *env, abort chan struct{}) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-e.ctx.Done():
		case <-done:
			return
		}
		fmt.Fprintln(e.stderr, "interlink ab: stopping after the current run (Ctrl-C again to end it now)")
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
		select {
		case <-sig:
			close(abort)
		case <-done:
		}
	}()
	return func() { close(done) }
}

func abProgress(e *env, done []ab.Run, total int) {
	run := done[len(done)-1]
	kind := ""
	if run.Warmup {
		kind = " warm-up"
	}
	status := "ok"
	if run.Error != "" {
		status = "failed: " + run.Error
	} else if run.Interrupted {
		status = "interrupted"
	}
	fmt.Fprintf(e.stderr, "run %d/%d (%s%s) %.1f s %s\n", len(done), total, run.Arm, kind, float64(run.WallNs)/1e9, oneLine(status))
}
