package main

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/doctest"
)

// repoRoot is the repository's root, absolute (a test may change the
// working directory).
var repoRoot = func() string {
	p, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return p
}()

// docFiles lists README.md and every Markdown file under docs/, as paths
// relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// maxReadmeLines keeps the README a page a newcomer reads in minutes; the
// detail lives in docs/.
const maxReadmeLines = 400

func TestReadmeIsShort(t *testing.T) {
	n := strings.Count(readDoc(t, "README.md"), "\n")
	if n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want under %d: move detail into docs/", n, maxReadmeLines)
	}
}

// TestReadmeOpensWithSetup keeps the README's first block the two set-up
// commands, and both targets in the Makefile.
func TestReadmeOpensWithSetup(t *testing.T) {
	bs := doctest.Blocks("README.md", readDoc(t, "README.md"))
	if len(bs) == 0 || len(bs[0].Lines) != 2 || !strings.HasPrefix(bs[0].Lines[0], "make demo ") || !strings.HasPrefix(bs[0].Lines[1], "make test ") {
		t.Fatalf("README.md's first block is not 'make demo' and 'make test': %v", bs)
	}
	mk := readDoc(t, "Makefile")
	for _, target := range []string{"\ndemo:", "\ntest:"} {
		if !strings.Contains(mk, target) {
			t.Errorf("Makefile has no %s target", strings.TrimSpace(target))
		}
	}
}

// TestDocCommandsParse checks every interlink command line in README.md and
// docs/ (fenced blocks: sh blocks line by line, other blocks after a "$ " or
// "# " prompt) against the real command tree: the subcommand exists, every
// flag exists for it and its value parses (typed flags by pflag, sizes and
// rates by internal/units), and the positional arguments are what the
// command accepts. Commands nested in 'lab exec', and in 'ab' arms and
// prepare steps, are checked too. Lines abridged with "..." and blocks
// marked <!-- doctest: skip --> are not checked.
func TestDocCommandsParse(t *testing.T) {
	checked, skipped := 0, 0
	for _, f := range docFiles(t) {
		for _, b := range doctest.Blocks(f, readDoc(t, f)) {
			if b.Marker == "skip" {
				continue
			}
			for _, c := range b.Commands() {
				cmds, err := doctest.SimpleCommands(c.Text)
				if err != nil {
					t.Errorf("%s: %v", c, err)
					continue
				}
				for _, words := range cmds {
					if !doctest.IsInterlink(words[0]) {
						continue
					}
					if doctest.Abridged(words) {
						skipped++
						continue
					}
					checked++
					if err := doctest.CheckCommand(words[1:]); err != nil {
						t.Errorf("%s\n\t%v", c, err)
					}
				}
			}
		}
	}
	t.Logf("%d interlink command lines parsed, %d abridged ones (with ...) not checked", checked, skipped)
	if checked < 50 {
		t.Errorf("only %d command lines found: is the extraction broken?", checked)
	}
}

// TestDocFlagsExist: every --flag written anywhere in README.md and docs/
// (prose included) is a flag of some interlink command, or one of the
// other programs' flags the pages quote. A flag that is renamed or removed
// cannot linger in a page.
func TestDocFlagsExist(t *testing.T) {
	known := doctest.Flags()
	// Other programs' flags quoted in the pages (go test, Chromium,
	// pgbench, ganesha, ...).
	for _, f := range otherFlags {
		known[f] = true
	}
	flagRE := regexp.MustCompile(`(?:^|[\s(\[\x60'"|/=,])--([a-z][a-z0-9-]*[a-z0-9])`)
	for _, f := range docFiles(t) {
		for i, l := range strings.Split(readDoc(t, f), "\n") {
			for _, m := range flagRE.FindAllStringSubmatch(l, -1) {
				if !known[m[1]] {
					t.Errorf("%s:%d: --%s is no interlink flag (nor listed in otherFlags)", f, i+1, m[1])
				}
			}
		}
	}
}

var otherFlags = []string{
	"no-sandbox", "screenshot", "window-size", "enable-logging", "docs-png", // Chromium, the report's browser test
	"wsrep-new-cluster",     // MariaDB
	"tiem",                  // the README's example of a mistyped flag
	"now",                   // systemctl enable --now
	"mps",                   // sockperf --mps, the messages per second its ping-pong paces to
	"update-kernel", "args", // grubby, in the fixes of check's CPU-IDLE
	"latency", // cyclictest --latency, its PM QoS request (the host in the round trip)
}

// TestDocLinks: every relative link in README.md and docs/ leads to a file
// that exists, and its #anchor to a heading of that file.
func TestDocLinks(t *testing.T) {
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		text := readDoc(t, f)
		fence := false
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				u, err := url.Parse(m[1])
				if err != nil {
					t.Errorf("%s:%d: %s: %v", f, i+1, m[1], err)
					continue
				}
				if u.Scheme != "" || u.Host != "" {
					continue // external: not checked here
				}
				target := f
				if u.Path != "" {
					target = path.Clean(path.Join(path.Dir(f), u.Path))
				}
				st, err := os.Stat(filepath.Join(repoRoot, target))
				if err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", f, i+1, m[1], target)
					continue
				}
				if u.Fragment == "" {
					continue
				}
				if st.IsDir() || !strings.HasSuffix(target, ".md") {
					t.Errorf("%s:%d: link %s: an anchor into %s, which is not a Markdown file", f, i+1, m[1], target)
					continue
				}
				if !doctest.Anchors(readDoc(t, target))[u.Fragment] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", f, i+1, m[1], target, u.Fragment)
				}
			}
		}
	}
}

// TestEveryDocIsLinked: every page under docs/ is reachable from the
// README, directly or through other pages, so nothing written is lost.
func TestEveryDocIsLinked(t *testing.T) {
	linkRE := regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)\s]*)?\)`)
	seen := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, m := range linkRE.FindAllStringSubmatch(readDoc(t, f), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			target := path.Clean(path.Join(path.Dir(f), m[1]))
			if seen[target] || !strings.HasSuffix(target, ".md") {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, target)); err != nil {
				continue // TestDocLinks reports it
			}
			seen[target] = true
			queue = append(queue, target)
		}
	}
	for _, f := range docFiles(t) {
		if !seen[f] {
			t.Errorf("%s: no page links to it (from README.md on)", f)
		}
	}
}
