// Package ab runs A/B experiments: two arms (a command each, or one command
// with a prepare step per arm that switches the configuration), interleaved
// in ABBA blocks or a randomised order after discarded warm-up runs, with
// metrics taken from each run (interlink's own JSON by name, any program's
// JSON by path, a regular expression over its output, or wall time) and a
// verdict per metric from the statistics in internal/stats.
//
// Operators change production settings (jumbo frames, mount options, CPU
// pinning) on one run per side. An experiment here says whether the
// difference is real, how big it is, and with what confidence.
package ab

import (
	"errors"
	"fmt"
	"github.com/interlink/interlink/internal/stats"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/shellq"
)

// ErrSpec marks an invalid experiment (bad flags, metric or expectation).
var ErrSpec = errors.New("ab: invalid experiment")

// Arm is one side of the experiment.
type Arm struct {
	Name string `json:"name"` // "A" or "B"
	// Command is an argv run directly, or, when Shell is set, one shell
	// command line run with sh -c.
	Command []string `json:"command"`
	Shell   bool     `json:"shell,omitempty"`
	// Prepare is a shell command line run (sh -c) before the arm's runs
	// whenever the previous run was the other arm's (or none): it switches
	// the configuration, e.g. `interlink lab set demo ic mtu=1500`.
	Prepare string `json:"prepare,omitempty"`
}

// CommandLine is the arm's command as a person would type it: the shell
// line as given, or the argv with each word quoted for a POSIX shell.
func (a Arm) CommandLine() string {
	if a.Shell {
		return strings.Join(a.Command, " ")
	}
	return shellq.Join(a.Command...)
}

// Order is how runs of the two arms are interleaved.
type Order string

// Orders: ABBA repeats A B B A blocks, so a linear drift over time hits
// both arms alike; Random shuffles each A B pair (a randomised block
// design), so no periodic effect lines up with one arm.
const (
	OrderABBA   Order = "abba"
	OrderRandom Order = "random"
)

// Spec describes an experiment. Zero values of the limits take the
// defaults named beside them.
type Spec struct {
	A, B       Arm
	Runs       int     // measured runs per arm (default 6)
	Warmup     int     // discarded runs per arm before (default 1)
	Order      Order   // default ABBA
	Seed       int64   // for OrderRandom; 0 picks one from the clock
	Confidence float64 // default 0.95
	Metrics    []Metric
	Expect     []Expectation
	// KeepGoing records a failed run and goes on; otherwise the first
	// failure ends the experiment (its result keeps what was measured).
	KeepGoing bool
	// RunTimeout bounds one run (default 10 min), PrepareTimeout one
	// prepare step (default 2 min), MaxTime the whole experiment (default
	// 2 h); a run still going at MaxTime is waited for, then the
	// experiment stops and says so.
	RunTimeout, PrepareTimeout, MaxTime time.Duration
	// MaxOutput bounds what is kept of a run's standard output (default
	// 16 MiB); a run that prints more fails.
	MaxOutput int
}

// Limits for flags: beyond these an experiment is a typo, not a plan.
const (
	MaxRuns   = 1000
	MaxWarmup = 100
)

func (s *Spec) defaults() {
	if s.Runs == 0 {
		s.Runs = 6
	}
	if s.Order == "" {
		s.Order = OrderABBA
	}
	if s.Confidence == 0 {
		s.Confidence = 0.95
	}
	if s.RunTimeout == 0 {
		s.RunTimeout = 10 * time.Minute
	}
	if s.PrepareTimeout == 0 {
		s.PrepareTimeout = 2 * time.Minute
	}
	if s.MaxTime == 0 {
		s.MaxTime = 2 * time.Hour
	}
	if s.MaxOutput == 0 {
		s.MaxOutput = 16 << 20
	}
}

// Validate fills the defaults and checks s; its errors wrap ErrSpec.
func (s *Spec) Validate() error {
	s.defaults()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...))
	}
	for _, arm := range []*Arm{&s.A, &s.B} {
		if len(arm.Command) == 0 || arm.Command[0] == "" {
			return bad("arm %s has no command", arm.Name)
		}
	}
	switch {
	case s.Runs < 2 || s.Runs > MaxRuns:
		need := "statistics need at least 2"
		if n := stats.MinRunsPerSide(s.Confidence); n > 2 {
			need += fmt.Sprintf("; a verdict at %g %% needs %d", 100*s.Confidence, n)
		}
		return bad("--runs %d: want 2 to %d runs per arm (%s)", s.Runs, MaxRuns, need)
	case s.Warmup < 0 || s.Warmup > MaxWarmup:
		return bad("--warmup %d: want 0 to %d", s.Warmup, MaxWarmup)
	case s.Order != OrderABBA && s.Order != OrderRandom:
		return bad("--order %q: want abba or random", s.Order)
	case !(s.Confidence > 0.5 && s.Confidence < 1): // NaN too
		return bad("--confidence %g: want a level between 0.5 and 1, e.g. 0.95", s.Confidence)
	case s.RunTimeout < 0 || s.PrepareTimeout < 0 || s.MaxTime < 0:
		return bad("timeouts must be positive")
	case s.MaxOutput < 0:
		return bad("output bound must be positive")
	}
	seen := map[string]bool{}
	for _, m := range s.Metrics {
		if seen[m.Name] {
			return bad("metric %q named twice", m.Name)
		}
		seen[m.Name] = true
	}
	for _, e := range s.Expect {
		if len(s.Metrics) > 0 && !seen[e.Metric] {
			return bad("--expect %q: no metric named %q (metrics: %s)", e.Text, e.Metric, names(s.Metrics))
		}
	}
	return nil
}

func names(ms []Metric) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += ", "
		}
		out += m.Name
	}
	return out
}
