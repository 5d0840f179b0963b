package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Run is one run of an arm.
type Run struct {
	Index       int                `json:"index"` // position in the run order, from 0
	Arm         string             `json:"arm"`
	Warmup      bool               `json:"warmup,omitempty"`
	Start       time.Time          `json:"start"`
	WallNs      int64              `json:"wall_ns"`
	ExitCode    int                `json:"exit_code"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
	Error       string             `json:"error,omitempty"`
	Interrupted bool               `json:"interrupted,omitempty"`
	// WakeShare is the share of the round trip's p50 that was the two
	// hosts waking up, from a blocks run's split; absent otherwise.
	WakeShare *float64 `json:"wake_share,omitempty"`
	// WakeDominant: the run's own verdict found the wake-ups most of the
	// round trip, with CPUs that went to sleep.
	WakeDominant bool `json:"wake_dominant,omitempty"`
}

// OK reports whether the run counts in the statistics.
func (r Run) OK() bool { return r.Error == "" && !r.Interrupted && !r.Warmup }

// Runner executes an experiment.
type Runner struct {
	Spec Spec
	// Progress, when set, is called after every run with the runs so far.
	Progress func(done []Run, total int)
	// Abort, when closed, ends the current run at once (the second Ctrl-C);
	// the context passed to Execute only stops the experiment after the
	// current run.
	Abort <-chan struct{}
}

// native reports whether argv runs interlink itself, whose JSON the
// experiment understands and whose exit codes 1 and 2 are verdicts, not
// failures.
func native(argv []string) bool {
	return len(argv) > 0 && filepath.Base(argv[0]) == "interlink"
}

// command returns the argv to execute for an arm: interlink is resolved to
// this very binary when it is not on PATH, and asked for --json.
func command(arm Arm) []string {
	if arm.Shell {
		return []string{"/bin/sh", "-c", arm.Command[0]}
	}
	argv := slices.Clone(arm.Command)
	if native(argv) {
		if _, err := exec.LookPath(argv[0]); err != nil {
			if self, err := os.Executable(); err == nil {
				argv[0] = self
			}
		}
		if !slices.Contains(argv, "--json") {
			argv = append(argv, "--json")
		}
	}
	return argv
}

// Execute runs the experiment. It returns the result with every run made,
// also when it stops early: ctx cancelled (after the current run), MaxTime
// reached, a prepare step or (without KeepGoing) a run failed; err says
// why it stopped early, nil when it ran to the end.
func (r *Runner) Execute(ctx context.Context) (*Result, error) {
	if err := r.Spec.Validate(); err != nil { // fills the defaults in r.Spec
		return nil, err
	}
	if r.Spec.Order == OrderRandom && r.Spec.Seed == 0 {
		r.Spec.Seed = time.Now().UnixNano()
	}
	s := r.Spec
	res := newResult(s)
	arms := [2]Arm{s.A, s.B}
	slots := Schedule(s.Order, s.Runs, s.Warmup, s.Seed)
	start := time.Now()
	prepared := -1
	for i, slot := range slots {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		if time.Since(start) >= s.MaxTime {
			res.LimitedBy = append(res.LimitedBy, fmt.Sprintf("max-time %s: %d of %d runs made", s.MaxTime, i, len(slots)))
			break
		}
		arm := arms[slot.Arm]
		if arm.Prepare != "" && prepared != slot.Arm {
			if err := r.prepare(arm); err != nil {
				res.finish()
				return res, err
			}
		}
		prepared = slot.Arm
		run := r.once(arm, i, slot.Warmup)
		if run.Error == "" && !run.Interrupted && len(res.Metrics) == 0 {
			res.Metrics = chooseMetrics(run.out)
		}
		if run.Error == "" && !run.Interrupted {
			run.Metrics, run.Error = extract(res.Metrics, run)
			run.WakeShare, run.WakeDominant = wakeShare(ParseJSON(run.out))
		}
		res.Runs = append(res.Runs, run.Run)
		if r.Progress != nil {
			r.Progress(res.Runs, len(slots))
		}
		if run.Interrupted {
			res.Interrupted = true
			break
		}
		if run.Error != "" && !s.KeepGoing {
			res.finish()
			return res, fmt.Errorf("run %d (%s) failed: %s", i+1, arm.Name, run.Error)
		}
	}
	res.finish()
	return res, nil
}

type outcome struct {
	Run
	out []byte
}

func (r *Runner) once(arm Arm, index int, warmup bool) outcome {
	argv := command(arm)
	o := outcome{Run: Run{Index: index, Arm: arm.Name, Warmup: warmup, Start: time.Now()}}
	stdout, stderr, code, err := r.exec(argv, r.Spec.RunTimeout)
	o.WallNs = time.Since(o.Start).Nanoseconds()
	o.ExitCode, o.out = code, stdout
	accept := code == 0 || (native(arm.Command) && !arm.Shell && (code == 1 || code == 2))
	switch {
	case errors.Is(err, errAborted):
		o.Interrupted = true
	case err != nil:
		o.Error = err.Error()
	case !accept:
		o.Error = fmt.Sprintf("exit status %d%s", code, lastLine(stderr))
	}
	return o
}

func (r *Runner) prepare(arm Arm) error {
	_, stderr, code, err := r.exec([]string{"/bin/sh", "-c", arm.Prepare}, r.Spec.PrepareTimeout)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d%s", code, lastLine(stderr))
	}
	if err != nil {
		return fmt.Errorf("prepare step of arm %s (%s) failed: %w", arm.Name, arm.Prepare, err)
	}
	return nil
}

var errAborted = errors.New("aborted")

// exec runs argv in a process group of its own, so a terminal's Ctrl-C
// reaches only interlink ab (which lets the run finish before it stops)
// and a timeout or abort ends the whole group; it returns the bounded
// output and the exit code.
func (r *Runner) exec(argv []string, timeout time.Duration) (stdout, stderr []byte, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if r.Abort != nil {
		go func() {
			select {
			case <-r.Abort:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	ownGroup(cmd)
	out := &bounded{max: r.Spec.MaxOutput}
	errb := &bounded{max: 64 << 10, keepTail: true}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	switch {
	case r.Abort != nil && isClosed(r.Abort):
		return out.Bytes(), errb.Bytes(), code, errAborted
	case ctx.Err() == context.DeadlineExceeded:
		return out.Bytes(), errb.Bytes(), code, fmt.Errorf("still running after %s (stopped)", timeout)
	case out.overflow:
		return out.Bytes(), errb.Bytes(), code, fmt.Errorf("printed more than %d bytes", r.Spec.MaxOutput)
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return nil, nil, -1, runErr
	}
	return out.Bytes(), errb.Bytes(), code, nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// bounded is a writer that keeps at most max bytes: the head, or with
// keepTail the most recent bytes.
type bounded struct {
	bytes.Buffer
	max      int
	keepTail bool
	overflow bool
}

func (b *bounded) Write(p []byte) (int, error) {
	if b.Len()+len(p) <= b.max {
		return b.Buffer.Write(p)
	}
	b.overflow = true
	if !b.keepTail {
		return 0, errors.New("output bound reached")
	}
	all := append(b.Buffer.Bytes(), p...)
	if len(all) > b.max {
		all = all[len(all)-b.max:]
	}
	b.Buffer.Reset()
	b.Buffer.Write(all)
	return len(p), nil
}

func lastLine(stderr []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stderr)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// chooseMetrics picks the metrics for an experiment run without --metric:
// from the first run's interlink JSON (bench by mode, bench --mode gc, db
// and storage by schema), or the wall time of any other command.
func chooseMetrics(out []byte) []Metric {
	mode := ""
	// interlink's own JSON says what it is, whether the arm ran interlink
	// directly or through a shell line (lab exec, ssh).
	if doc := ParseJSON(out); doc != nil {
		switch s, _ := lookup(doc, []string{"schema"}).(string); s {
		case "interlink.bench/v1":
			mode, _ = lookup(doc, []string{"spec", "mode"}).(string)
		case "interlink.db/v1", "interlink.storage/v1", "interlink.gc/v1":
			mode = s
			if s == "interlink.storage/v1" && lookup(doc, []string{"emulation"}) != nil {
				mode = "interlink.storage/v1 nfs"
			}
			if s == "interlink.db/v1" && lookup(doc, []string{"galera"}) != nil {
				mode = "interlink.db/v1 galera"
			}
		}
	}
	names, ok := DefaultMetrics[mode]
	if !ok {
		names = DefaultMetrics[""]
	}
	ms := make([]Metric, 0, len(names))
	for i, n := range names {
		m, _ := ParseMetric(n)
		m.optional = i > 0 // the headline figure is the question; the others may be absent
		ms = append(ms, m)
	}
	return ms
}

func extract(ms []Metric, o outcome) (map[string]float64, string) {
	doc := ParseJSON(o.out)
	vals := make(map[string]float64, len(ms))
	for _, m := range ms {
		v, err := m.Extract(o.out, doc, time.Duration(o.WallNs))
		if err != nil && m.optional && errors.Is(err, errAbsent) {
			continue // not measured in this run: left out, not 0
		}
		if err != nil {
			return vals, err.Error()
		}
		vals[m.Name] = v
	}
	return vals, ""
}
