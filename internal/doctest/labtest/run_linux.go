//go:build linux

// Package labtest runs the guides' lab commands for real: the blocks of a
// guide marked <!-- doctest: lab --> are run in order, as a reader runs
// them, as root, with the interlink binary under test first on PATH, in
// labs of the test's own names. Its tests run the namespace-lab guides;
// internal/doctest/vmguide runs the VM guide with Run.
package labtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/doctest"
)

// Run runs the lab blocks of guide (a path relative to root, the
// repository) with the binary bin, in a temporary working directory that
// stands for the page's /tmp/. labs maps each lab name the page uses to
// the test's own name (labs coexist, so guides run at once). Each block
// runs as one bash script (runBlock). A console block's "$ echo $?" must
// show the command's exit code (an ab's depends on its noise: 0 or 1),
// and the output it shows must have the shape of what the command prints
// (MatchShape: measurements differ from run to run; an ab's verdicts,
// drift and outliers too, so abShape leaves them out); any other command
// must not exit 3 (UNKNOWN), 126 or 127 (not run). What a run costs is
// cut where it does not change what the page shows: a bench or demo of an
// sh block runs 1 s (a bench without --time, and cluster's --bench, too),
// as a console block's bench does (its shape has no interval lines), an
// ab 4 runs per arm of 1 s without warm-up, a storm of an sh block 60
// clients.
//
// With $INTERLINK_DOCS_RERUN set (make docs RERUN=1), Run runs every
// command as the page has it, uncut, and writes what each printed, and
// its exit code, into the page in place of what the page showed (a
// shown output abridged with "..." is left as it is).
func Run(t *testing.T, root, bin, guide string, labs map[string]string) {
	RunCluster(t, root, bin, guide, labs, Cluster{})
}

// RunCluster is Run for a page written for a real cluster, which c plays:
// its blocks marked "on NODE" run in c's lab (Cluster). A block marked
// "stopped after Ns" has a last command that runs until stopped (an
// agent, a watch): it is stopped with SIGINT after N s, and must still be
// running then.
func RunCluster(t *testing.T, root, bin, guide string, labs map[string]string, c Cluster) {
	path := filepath.Join(root, guide)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rename, renameOut := renamers(labs, dir+"/")
	r := &runner{bin: bin, dir: dir, rename: rename, renameOut: renameOut, rerun: os.Getenv("INTERLINK_DOCS_RERUN") != "",
		unrename: unrenamer(labs, dir+"/", filepath.Dir(bin)+"/"), cluster: c}
	if c.Lab != "" {
		r.upCluster(t)
	}
	t.Cleanup(func() {
		for _, name := range labs {
			exec.Command(bin, "lab", "down", name).Run()
		}
	})
	ran := 0
	for _, blk := range doctest.Blocks(guide, string(b)) {
		if blk.Marker == "lab" {
			ran += r.block(t, blk)
		}
	}
	if ran == 0 {
		t.Fatalf("%s has no block marked <!-- doctest: lab -->", guide)
	}
	if r.rerun {
		if err := os.WriteFile(path, []byte(applyEdits(string(b), r.edits)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runner runs the lab blocks of one page.
type runner struct {
	bin, dir          string
	rename, renameOut func(string) string
	rerun             bool                // write what ran into the page
	unrename          func(string) string // printed output in the page's names
	edits             []edit
	cluster           Cluster
	upper             string // the test's /etc: the overlay's upper directory
	holder            int    // the process holding the mount namespace of the test's /etc
	agentsUp          bool
	home              string // the reader's HOME on the cluster's nodes ("": the test's own)
	scripts           int    // scripts written, for their names
}

// A step is one command of a block, with the exit code the page shows
// for it ("$ echo $?" after it), if any.
type step struct {
	c        doctest.CmdLine
	want     int
	haveWant bool
	wantLine int // the line of the exit code the page shows
}

func steps(blk doctest.Block) []step {
	var out []step
	cmds := blk.Commands()
	for i, c := range cmds {
		if c.Text == "echo $?" {
			continue
		}
		s := step{c: c}
		if i+1 < len(cmds) && cmds[i+1].Text == "echo $?" {
			w, err := strconv.Atoi(strings.TrimSpace(strings.Join(cmds[i+1].Out, "")))
			s.want, s.haveWant, s.wantLine = w, err == nil, cmds[i+1].OutLine
		}
		out = append(out, s)
	}
	return out
}

// block runs the commands of a block as one bash script, as a reader
// pastes them into one shell (a variable set or a job started with &
// stays for the commands after it), each followed by a line with its exit
// code, and holds them to what the block shows (or, rerunning, records
// what they printed). It returns how many ran.
func (r *runner) block(t *testing.T, blk doctest.Block) int {
	st := steps(blk)
	node, stop, err := placement(blk.Reason)
	if err != nil {
		t.Errorf("%s:%d: %v", blk.File, blk.Line, err)
		return 0
	}
	if node != "" && r.cluster.Lab == "" {
		t.Errorf("%s:%d: a block on node %s, and the test plays no cluster (RunCluster)", blk.File, blk.Line, node)
		return 0
	}
	if node != "" && !strings.Contains(strings.Join(blk.Lines, "\n"), "interlink agent ") {
		r.startAgents(t) // unless the block starts an agent itself
	}
	var b strings.Builder
	for i, s := range st {
		script := r.rename(s.c.Script())
		switch {
		case r.rerun:
		case isAB(s.c.Text):
			script = abRuns.ReplaceAllString(benchTime.ReplaceAllString(script, "${1}1s"), "--runs 4")
			script = abWarmup.ReplaceAllString(script, "--warmup 0")
		case blk.Shell() || isBench(s.c.Text):
			// a console block's bench too: its shape (benchShape) has
			// no interval lines, the only lines --time changes
			script = shorten(benchTime.ReplaceAllString(script, "${1}1s"))
			if strings.Contains(script, "interlink storm ") {
				script = stormClients.ReplaceAllString(script, "--clients 60")
			}
		}
		if stop > 0 && i == len(st)-1 {
			script = fmt.Sprintf("timeout -s INT -k 10s %s bash %s", stop, r.script(t, script))
		}
		b.WriteString(script + "\necho \"@@exit $?\"\n")
	}
	whole := b.String()
	if node != "" {
		whole = r.onNode(node, r.script(t, whole))
	}
	out, code := bash(t, r.bin, r.dir, whole)
	parts := strings.Split(out, "@@exit ")
	for i, s := range st {
		if i+1 >= len(parts) {
			t.Errorf("%s: did not run (the script exited %d):\n%s", s.c, code, out)
			return i
		}
		text := parts[i]
		if i > 0 {
			_, text, _ = strings.Cut(text, "\n") // after the previous exit code
		}
		rcText, _, _ := strings.Cut(parts[i+1], "\n")
		rc, _ := strconv.Atoi(rcText)
		t.Logf("%s: exit %d\n%s", s.c, rc, text)
		if stop > 0 && i == len(st)-1 {
			// timeout's 124: it was still running when stopped, as the page
			// says it runs
			if rc != 124 {
				t.Errorf("%s: exited %d before it was stopped after %s:\n%s", s.c, rc, stop, text)
			}
			continue
		}
		if r.rerun {
			if !s.haveWant && (rc == 3 || rc == 126 || rc == 127) {
				t.Errorf("%s: exits %d:\n%s", s.c, rc, text)
			}
			r.record(s, rc, text)
			continue
		}
		s.check(t, rc, text, r.renameOut)
	}
	return len(st)
}

// script writes text to a new file in the test's directory and returns
// its path.
func (r *runner) script(t *testing.T, text string) string {
	r.scripts++
	f := filepath.Join(r.dir, fmt.Sprintf(".block%d.sh", r.scripts))
	if err := os.WriteFile(f, []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// An edit replaces n lines of a page from line (1-based) with text.
type edit struct {
	line, n int
	text    []string
}

// record keeps what a command printed and its exit code for the page,
// where the page shows them; an output abridged with "..." stays.
func (r *runner) record(s step, code int, out string) {
	if s.haveWant {
		r.edits = append(r.edits, edit{s.wantLine, 1, []string{strconv.Itoa(code)}})
	}
	shown := s.c.Out
	for len(shown) > 0 && strings.TrimSpace(shown[len(shown)-1]) == "" {
		shown = shown[:len(shown)-1]
	}
	if len(shown) == 0 || slices.ContainsFunc(shown, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "...") }) {
		return
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		lines = append(lines, strings.TrimRight(r.unrename(l), " \t"))
	}
	r.edits = append(r.edits, edit{s.c.OutLine, len(shown), lines})
}

// applyEdits returns text with the edits made, from the last up.
func applyEdits(text string, edits []edit) string {
	lines := strings.Split(text, "\n")
	slices.SortFunc(edits, func(a, b edit) int { return b.line - a.line })
	for _, e := range edits {
		lines = slices.Concat(lines[:e.line-1], e.text, lines[e.line-1+e.n:])
	}
	return strings.Join(lines, "\n")
}

// unrenamer returns a function that puts a printed line back into the
// page's names: the test's lab names, its directory (the page's /tmp/)
// and the binary's directory (interlink is on the reader's PATH).
func unrenamer(labs map[string]string, tmp, binDir string) func(string) string {
	var pairs []string
	for page, name := range labs {
		for _, f := range []string{"lab %s:", "il-%s", "labs/%s.d/", "lab exec %s ", "lab set %s ", "lab %s is", "lab down %s"} {
			pairs = append(pairs, fmt.Sprintf(f, name), fmt.Sprintf(f, page))
		}
	}
	pairs = append(pairs, binDir, "", tmp, "/tmp/")
	return strings.NewReplacer(pairs...).Replace
}

// check holds one command's exit code and output to the page: the
// "$ echo $?" after it (an ab's exit is its verdict, which the noise of
// the run decides: 0, 1 and 2 pass for each other, as its verdict lines
// do), else not 3, 126 or 127; the shown output by shape.
func (s step) check(t *testing.T, code int, out string, renameOut func(string) string) {
	ab := isAB(s.c.Text)
	switch {
	case s.haveWant && s.want != code && !(ab && code <= 2 && s.want <= 2):
		t.Errorf("%s: exits %d, the page says %d", s.c, code, s.want)
	case !s.haveWant && (code == 3 || code == 126 || code == 127):
		t.Errorf("%s: exits %d:\n%s", s.c, code, out)
	}
	if len(s.c.Out) == 0 {
		return
	}
	shown := make([]string, len(s.c.Out))
	for i, l := range s.c.Out {
		shown[i] = renameOut(l)
	}
	switch {
	case ab:
		shown, out = abShape(shown), strings.Join(abShape(strings.Split(out, "\n")), "\n")
	case isBench(s.c.Text):
		shown, out = benchShape(shown), strings.Join(benchShape(strings.Split(out, "\n")), "\n")
	}
	if err := doctest.MatchShape(shown, out); err != nil {
		t.Errorf("%s: the page shows output of another shape than the command prints: %v", s.c, err)
	}
}

var stormClients = regexp.MustCompile(`--clients [0-9]+`)

// benchTime matches the --time of an interlink bench or lab demo command
// line.
var benchTime = regexp.MustCompile(`(\binterlink (?:bench|lab demo)\b[^\n]*?--time )[0-9]+s\b`)

// renamers returns a function that moves a command line from the page's
// lab names to the test's, and the page's /tmp/ into the test's
// directory, and one that does the same to a line of shown output.
func renamers(labs map[string]string, tmp string) (func(string) string, func(string) string) {
	type rule struct {
		re   *regexp.Regexp
		repl func(string) string
	}
	var rules []rule
	var out []string
	for page, name := range labs {
		q := regexp.QuoteMeta(page)
		up := regexp.MustCompile(`\blab up ` + q + `\b`)
		demo := regexp.MustCompile(`\blab demo\b`)
		other := regexp.MustCompile(`\blab (exec|set|down|status) ` + q + `\b`)
		named := regexp.MustCompile(`\blab demo\b[^\n]*?--name ` + q + `\b`)
		rules = append(rules,
			rule{up, func(m string) string { return m + " --name " + name }},
			rule{other, func(m string) string { return strings.TrimSuffix(m, page) + name }},
			rule{named, func(m string) string { return strings.TrimSuffix(m, page) + name }},
		)
		if page == "demo" {
			rules = append(rules, rule{demo, func(m string) string { return m + " --name " + name }})
		}
		if page == "replica" { // lab replica names its lab "replica"
			rules = append(rules, rule{regexp.MustCompile(`\blab replica\b`), func(m string) string { return "lab replica --name " + name }})
		}
		out = append(out, "lab "+page+":", "lab "+name+":", "il-"+page, "il-"+name, "labs/"+page+".d/", "labs/"+name+".d/",
			"lab exec "+page+" ", "lab exec "+name+" ", "lab set "+page+" ", "lab set "+name+" ")
	}
	out = append(out, "/tmp/", tmp)
	outR := strings.NewReplacer(out...)
	return func(s string) string {
		for _, r := range rules {
			s = r.re.ReplaceAllStringFunc(s, r.repl)
		}
		for page, name := range labs {
			s = strings.ReplaceAll(s, "labs/"+page+".d/", "labs/"+name+".d/")
		}
		return strings.ReplaceAll(s, "/tmp/", tmp)
	}, outR.Replace
}

// bash runs script with bin first on PATH and returns its output (stdout
// and stderr) and exit code. bash, not sh: it has the job table that a
// page's "kill %1" needs.
func bash(t *testing.T, bin, dir, script string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	default:
		t.Fatalf("%s: %v", script, err)
		return "", 0
	}
}
