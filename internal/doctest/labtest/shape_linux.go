//go:build linux

package labtest

import (
	"regexp"
	"strings"
)

var (
	abRuns   = regexp.MustCompile(`--runs [0-9]+`)
	abWarmup = regexp.MustCompile(`--warmup [0-9]+`)
	// abVerdict: a metric's verdict line and an --expect's.
	abVerdict = regexp.MustCompile(`^(\s+\S+ \((?:higher|lower) is better\)|expect .*?): .*$`)
	abNoise   = regexp.MustCompile(`^\s+(drift|outliers|NOTE): `)
)

func isAB(cmd string) bool { return strings.HasPrefix(cmd, "interlink ab ") }

// isBench says whether cmd runs interlink bench, directly or in a lab node.
func isBench(cmd string) bool { return benchCmd.MatchString(cmd) && !isAB(cmd) }

var (
	benchCmd = regexp.MustCompile(`(^|\s)interlink bench\b`)
	// benchNoise: a bench's interval lines (how many depends on --time and
	// the machine's stalls) and its verdict that the round trip is mostly
	// the hosts waking up (printed or not by the machine's load).
	benchNoise = regexp.MustCompile(`^(\[\w+\]\s|The round trip is mostly the two hosts waking up)`)
	// benchIdle: what the idle line concludes depends on how often the
	// CPUs slept, which the machine's load decides.
	benchIdle = regexp.MustCompile(`(times per block): .*$`)
	// benchAccounted: why the parts' p50s miss the round trip's, said
	// only when they do, which the run's spread decides.
	benchAccounted = regexp.MustCompile(`(of the round trip's p50 \([^)]*\)): .*$`)
)

// benchShape is a bench report without what the machine's load decides:
// the interval lines and the wake-up verdict left out, the idle note and
// the split's sum cut after their figures.
func benchShape(lines []string) []string {
	var out []string
	for _, l := range lines {
		if benchNoise.MatchString(l) {
			continue
		}
		l = benchAccounted.ReplaceAllString(l, "$1")
		out = append(out, benchIdle.ReplaceAllString(l, "$1: CONCLUSION"))
	}
	return out
}

// abShape is an ab report without what its noise decides: each verdict
// cut to its metric; drift, outlier and note lines (a note on how much of
// the round trip was the hosts waking up) left out; each row of the table
// cut to its metric (a count that was 0 in every run has "-" for B/A).
func abShape(lines []string) []string {
	var out []string
	table := false
	for _, l := range lines {
		switch {
		case strings.Contains(l, "CI of B/A"):
			table = true
		case strings.TrimSpace(l) == "":
			table = false
		case table:
			l = strings.Fields(l)[0]
		case abNoise.MatchString(l):
			continue
		}
		out = append(out, abVerdict.ReplaceAllString(l, "$1: VERDICT"))
	}
	return out
}

var (
	benchNoTime   = regexp.MustCompile(`\binterlink bench `)
	clusterNoTime = regexp.MustCompile(`\binterlink cluster `)
)

// shorten cuts the runs a command line leaves at their defaults: a bench
// without --time (10 s) and cluster's --bench without --bench-time run
// 1 s.
func shorten(script string) string {
	if benchNoTime.MatchString(script) && !strings.Contains(script, "--time ") {
		script = benchNoTime.ReplaceAllString(script, "interlink bench --time 1s ")
	}
	if clusterNoTime.MatchString(script) && strings.Contains(script, "--bench ") && !strings.Contains(script, "--bench-time") {
		script = clusterNoTime.ReplaceAllString(script, "interlink cluster --bench-time 1s ")
	}
	return script
}
