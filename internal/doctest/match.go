package doctest

import (
	"fmt"
	"regexp"
	"strings"
)

// timeRE matches the times a run prints (RFC 3339 UTC).
var timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

func normalizeLine(s string) string {
	return strings.TrimRight(timeRE.ReplaceAllString(s, "TIME"), " \t")
}

// numberRE matches a measurement as interlink prints it: a number with the
// unit it chose for its size (9000, 0.088 ms, 736ms, 1m0s, 1.72 KiB,
// 20.53 Gbit/s) or a ratio (1.114x); runs of them (1m0s) are one.
var numberRE = regexp.MustCompile(`([0-9]+(\.[0-9]+)? ?(ns|us|µs|ms|s|m|h|B|KiB|MiB|GiB|TiB|bit/s|Kbit/s|Mbit/s|Gbit/s|x)?\b)+`)

// kernelRE matches a kernel release (6.1.0-56-amd64, 6.18.44-fc-v595),
// which differs from machine to machine like a measurement.
var kernelRE = regexp.MustCompile(`\b[0-9]+\.[0-9]+\.[0-9]+-[A-Za-z0-9._+-]+`)

// tmpRE matches a path under /tmp, whose name a run makes up (mktemp's
// XXfFzN3t, a test's directory).
var tmpRE = regexp.MustCompile(`/tmp/\S+`)

// slowestRE matches mesh's slowest node, which a healthy mesh's timing
// picks.
var slowestRE = regexp.MustCompile(`slowest node \S+`)

// versionRE matches the version a result names its tool by ("(interlink
// 0.1.0~dev.20261128.610bbd59)"), which differs from build to build.
var versionRE = regexp.MustCompile(`\(interlink [^)\s]+\)`)

// shapeLine reduces a line to its shape: every time TIME, measurement N,
// kernel release KERNEL, path under /tmp TMP, interlink's version,
// mesh's slowest node,
// runs of blanks one blank (columns widen with their numbers).
func shapeLine(s string) string {
	s = slowestRE.ReplaceAllString(timeRE.ReplaceAllString(s, "TIME"), "slowest node NODE")
	s = tmpRE.ReplaceAllString(kernelRE.ReplaceAllString(s, "KERNEL"), "TMP")
	s = versionRE.ReplaceAllString(s, "(interlink VERSION)")
	return strings.Join(strings.Fields(numberRE.ReplaceAllString(s, "N")), " ")
}

// MatchOutput matches the lines a page shows against what a command
// printed: line by line, times not compared, trailing blanks ignored; a
// shown line starting with "..." (after indentation) stands for any run of
// printed lines, none included.
func MatchOutput(shown []string, printed string) error {
	return match(shown, printed, normalizeLine)
}

// MatchShape is MatchOutput for measurements, which differ from run to run:
// every number matches any number, and blanks are not counted. What is
// left (verdict words, units, the '!' of a matrix cell, which lines there
// are) must match.
func MatchShape(shown []string, printed string) error {
	return match(shown, printed, shapeLine)
}

func match(shown []string, printed string, norm func(string) string) error {
	got := strings.Split(strings.TrimRight(printed, "\n"), "\n")
	for len(shown) > 0 && strings.TrimSpace(shown[len(shown)-1]) == "" {
		shown = shown[:len(shown)-1]
	}
	memo := map[[2]int]bool{} // shown[i:] matches got[j:]
	seen := map[[2]int]bool{}
	best := 0 // the furthest shown line reached, for the message
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		best = max(best, i)
		var ok bool
		switch {
		case i == len(shown):
			ok = j == len(got)
		case strings.HasPrefix(strings.TrimSpace(shown[i]), "..."):
			ok = match(i+1, j) || (j < len(got) && match(i, j+1))
		default:
			ok = j < len(got) && norm(shown[i]) == norm(got[j]) && match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	if match(0, 0) {
		return nil
	}
	if best < len(shown) {
		return fmt.Errorf("no printed line matches the page's line %d: %q", best+1, shown[best])
	}
	return fmt.Errorf("the command printed more lines than the page shows")
}
