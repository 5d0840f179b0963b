package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestABBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ab"}, "give the command after '--', or both --a CMD and --b CMD"},
		{[]string{"ab", "true"}, "put the command after '--'"},
		{[]string{"ab", "--a", "true"}, "both --a CMD and --b CMD"},
		{[]string{"ab", "--a", "true", "--b", "true", "--", "true"}, "not both"},
		{[]string{"ab", "--runs", "1", "--", "true"}, "--runs 1: want 2 to 1000"},
		{[]string{"ab", "--runs", "-3", "--", "true"}, "--runs -3"},
		{[]string{"ab", "--warmup", "-1", "--", "true"}, "--warmup -1"},
		{[]string{"ab", "--order", "zig", "--", "true"}, `--order "zig"`},
		{[]string{"ab", "--confidence", "2", "--", "true"}, "--confidence 2"},
		{[]string{"ab", "--confidence", "0", "--", "true"}, "--confidence 0: want a level"},
		{[]string{"ab", "--confidence", "NaN", "--", "true"}, "--confidence NaN: want a level"},
		{[]string{"ab", "--runs", "0", "--", "true"}, "--runs 0: want 2 to 1000"},
		{[]string{"ab", "--metric", "nosuch", "--", "true"}, `--metric "nosuch": not a metric interlink knows`},
		{[]string{"ab", "--metric", "tps=tps [0-9]+", "--", "true"}, "capture group"},
		{[]string{"ab", "--expect", "B > A", "--", "true"}, "want 'METRIC: B > A'"},
		{[]string{"ab", "--metric", "wall", "--expect", "tps: B > A", "--", "true"}, `no metric named "tps"`},
		{[]string{"ab", "--max-time", "0s", "--", "true"}, "must be positive"},
	} {
		o, e, code := run(t, tc.args...)
		if code != ExitUnknown || !strings.Contains(e, tc.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 || o != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 3 and one line with %q", tc.args, code, e, o, tc.want)
		}
	}
}

func TestABRunsAndJudges(t *testing.T) {
	// Two shell arms whose output differs by a known factor; the experiment
	// must find it, and --expect decides the exit code.
	args := []string{"ab", "--runs", "4", "--warmup", "0", "--metric", "v=v = ([0-9]+)",
		"--a", "echo v = 100", "--b", "echo v = 150"}
	o, e, code := run(t, append(args, "--expect", "v: B > 1.2x A")...)
	if code != ExitOK || !strings.Contains(o, "v (higher is better): B is 1.5x A") || !strings.Contains(o, "expect v: B > 1.2x A: holds") {
		t.Errorf("exit %d\n%s\n%s", code, o, e)
	}
	if _, _, code := run(t, append(args, "--expect", "v: B < A")...); code != ExitCritical {
		t.Errorf("contradicted expectation: exit %d, want 2", code)
	}
	page := filepath.Join(t.TempDir(), "ab.html")
	o, _, code = run(t, append(args, "--json", "--html", page)...)
	if html, err := os.ReadFile(page); err != nil || strings.Count(string(html), `<title>run `) != 8 {
		t.Errorf("--html: %v; want the 8 runs in order", err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Runs   []struct {
			Arm     string             `json:"arm"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(o), &doc); err != nil || code != ExitOK {
		t.Fatalf("exit %d, JSON %v:\n%s", code, err, o)
	}
	if doc.Schema != "interlink.ab/v1" || len(doc.Runs) != 8 || doc.Runs[1].Arm != "B" || doc.Runs[1].Metrics["v"] != 150 || doc.Verdict != "ok" {
		t.Errorf("document %+v", doc)
	}
	// A failing arm: the partial report, then one line and exit 3.
	o, e, code = run(t, "ab", "--runs", "2", "--metric", "v=v = ([0-9]+)", "--a", "echo v = 1", "--b", "echo boom >&2; exit 5")
	if code != ExitUnknown || !strings.Contains(e, "run 2 (B) failed: exit status 5: boom") || !strings.Contains(o, "interlink ab:") {
		t.Errorf("failing arm: exit %d\n%s\n%s", code, o, e)
	}
}

// TestABTooFewRuns is issue 34's case: two runs per arm of two sleeps 30 %
// apart. Their interval can be no more than a 66.7 % one, so the command
// gives no verdict and says how many runs 95 % needs; an expectation is
// inconclusive (exit 1), not held or contradicted.
func TestABTooFewRuns(t *testing.T) {
	args := []string{"ab", "--runs", "2", "--a", "sleep 0.01", "--b", "sleep 0.013"}
	o, e, code := run(t, args...)
	if code != ExitOK || !strings.Contains(o, "wall (lower is better): no verdict: too few runs for 95 % (need 4 a side); B is ") ||
		!strings.Contains(o, "(66.6 % CI ") || !strings.Contains(o, " (66.6 %)") || strings.Contains(o, ": worse") || strings.Contains(o, ": better") {
		t.Errorf("exit %d\n%s\n%s", code, o, e)
	}
	o, e, code = run(t, append(args, "--expect", "wall: B > A")...)
	if code != ExitWarning || !strings.Contains(o, "expect wall: B > A: inconclusive (too few runs for 95 % (need 4 a side); the 66.6 % interval") {
		t.Errorf("with --expect: exit %d\n%s\n%s", code, o, e)
	}
	o, _, code = run(t, append(args, "--json")...)
	var doc struct {
		Stats []struct {
			Significant bool                              `json:"significant"`
			Better      string                            `json:"better"`
			Advice      any                               `json:"advice"`
			Shift       struct{ Level, Achieved float64 } `json:"shift"`
		} `json:"statistics"`
	}
	if err := json.Unmarshal([]byte(o), &doc); err != nil || code != ExitOK || len(doc.Stats) == 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, o)
	}
	// JSON keeps the exact level; only the text rounds it down.
	if s := doc.Stats[0]; s.Significant || s.Better != "" || s.Advice != nil || s.Shift.Level != 0.95 || math.Abs(s.Shift.Achieved-(1-2.0/6)) > 1e-12 {
		t.Errorf("statistics %+v", s)
	}
	// An asked level with two decimals prints as asked, never as 100 %.
	o, e, code = run(t, append(args, "--confidence", "0.9995")...)
	if code != ExitOK || !strings.Contains(o, "99.95 % confidence") || !strings.Contains(o, "too few runs for 99.95 % (need 8 a side)") ||
		!strings.Contains(o, "(66.6 % CI ") || strings.Contains(o, "100 %") {
		t.Errorf("--confidence 0.9995: exit %d\n%s\n%s", code, o, e)
	}
}
