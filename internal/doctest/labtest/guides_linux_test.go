//go:build linux

// Package labtest runs the guides' lab commands for real: the blocks of a
// guide marked <!-- doctest: lab --> are run in order, as a reader runs
// them, as root, with the interlink binary built from this tree first on
// PATH, in a lab of the test's own name.
package labtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/doctest"
	"github.com/interlink/interlink/internal/testlab"
)

var bin string // the interlink binary under test

func TestMain(m *testing.M) {
	testlab.Main(m, "guide lab tests", &bin, "td-interlink-")
}

// The guides run at once, each in its lab of its own name (labs coexist):
// they measure nothing against a threshold.

// TestJumboFramesGuide runs the jumbo frames guide in its demo lab: the
// demo kept up, pmtu to the blackholed and the healthy node, the mesh, the
// port fixed and the mesh again, the blocks bench on both networks.
func TestJumboFramesGuide(t *testing.T) {
	t.Parallel()
	runGuide(t, "docs/guides/jumbo-frames.md", "demo", "td-jumbo")
}

// TestNFSGuideDirectNFS proves the Direct NFS paths of the NFS guide's
// oranfstab in the dnfs lab.
func TestNFSGuideDirectNFS(t *testing.T) {
	t.Parallel()
	runGuide(t, "docs/guides/nfs.md", "dnfs", "td-dnfs")
}

// runGuide runs the lab blocks of guide (relative to the repository root),
// whose commands use the lab name page, in a lab named name: every
// command in its own sh, in a temporary working directory where the page's
// /tmp/ is. A console block's "$ echo $?" must show the command's exit
// code, and the output it shows must have the shape of what the command
// prints (MatchShape: measurements differ from run to run); any other
// command must not exit 3 (UNKNOWN), 126 or 127 (not run).
func runGuide(t *testing.T, guide, page, name string) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", guide))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rename := renamer(page, name, dir+"/")
	renameOut := strings.NewReplacer("lab "+page+":", "lab "+name+":", "il-"+page, "il-"+name, "/tmp/", dir+"/").Replace
	t.Cleanup(func() {
		exec.Command(bin, "lab", "down", name).Run()
	})
	ran := 0
	for _, blk := range doctest.Blocks(guide, string(b)) {
		if blk.Marker != "lab" {
			continue
		}
		cmds := blk.Commands()
		for i, c := range cmds {
			if c.Text == "echo $?" {
				continue
			}
			script := rename(c.Script())
			if blk.Shell() {
				// A bench or demo of a block that shows no output runs
				// 1 s: its exit code is what is checked, and 1 s gives
				// the same (internal/demo's tests run the demo so).
				script = benchTime.ReplaceAllString(script, "${1}1s")
			}
			out, code := sh(t, dir, script)
			ran++
			t.Logf("%s: exit %d\n%s", c, code, out)
			if i+1 < len(cmds) && cmds[i+1].Text == "echo $?" {
				want, err := strconv.Atoi(strings.TrimSpace(strings.Join(cmds[i+1].Out, "")))
				if err != nil || want != code {
					t.Errorf("%s: exits %d, the page says %q", c, code, cmds[i+1].Out)
				}
			} else if code == 3 || code == 126 || code == 127 {
				t.Errorf("%s: exits %d:\n%s", c, code, out)
			}
			if !blk.Shell() && len(c.Out) > 0 {
				shown := make([]string, len(c.Out))
				for i, l := range c.Out {
					shown[i] = renameOut(l)
				}
				if err := doctest.MatchShape(shown, out); err != nil {
					t.Errorf("%s: the page shows output of another shape than the command prints: %v", c, err)
				}
			}
		}
	}
	if ran == 0 {
		t.Fatalf("%s has no block marked <!-- doctest: lab -->", guide)
	}
}

// benchTime matches the --time of an interlink bench or lab demo command
// line.
var benchTime = regexp.MustCompile(`(\binterlink (?:bench|lab demo)\b[^\n]*--time )[0-9]+s\b`)

// renamer returns a function that moves a command line from the page's
// lab name to the test's, and the page's /tmp/ into the test's directory.
func renamer(page, name, tmp string) func(string) string {
	up := regexp.MustCompile(`\blab (up|demo)( ` + regexp.QuoteMeta(page) + `)?\b`)
	other := regexp.MustCompile(`\blab (exec|set|down|status) ` + regexp.QuoteMeta(page) + `\b`)
	return func(s string) string {
		s = up.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, "lab demo") {
				return m + " --name " + name
			}
			if m == "lab up "+page {
				return m + " --name " + name
			}
			return m
		})
		s = other.ReplaceAllString(s, "lab $1 "+name)
		s = strings.ReplaceAll(s, "labs/"+page+".d/", "labs/"+name+".d/")
		return strings.ReplaceAll(s, "/tmp/", tmp)
	}
}

// sh runs script with the binary under test first on PATH and returns its
// output (stdout and stderr) and exit code.
func sh(t *testing.T, dir, script string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
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
