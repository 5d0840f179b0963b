package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cli"
	"github.com/interlink/interlink/internal/doctest"
)

// TestDocOutputs runs, for real and in this process, the interlink
// commands of every block marked <!-- doctest: output --> (commands that
// need no lab and no root: check over the captured trees under testdata/,
// check --rules, ...) from the repository root, and holds the block to
// their output: every line as printed, but a line starting with "..."
// stands for any lines the page leaves out, and times are not compared.
// "$ echo $?" after a command must show its exit code.
func TestDocOutputs(t *testing.T) {
	t.Chdir(repoRoot)
	ran := 0
	for _, f := range docFiles(t) {
		for _, b := range doctest.Blocks(f, readDoc(t, f)) {
			if b.Marker != "output" {
				continue
			}
			cmds := b.Commands()
			for i, c := range cmds {
				words, err := doctest.SimpleCommands(c.Text)
				if err != nil || len(words) != 1 || !doctest.IsInterlink(words[0][0]) {
					if c.Text != "echo $?" {
						t.Errorf("%s: an output block runs single interlink commands (and echo $?) only", c)
					}
					continue
				}
				var out bytes.Buffer
				code := cli.Main(context.Background(), words[0][1:], &out, &out)
				ran++
				if err := doctest.MatchOutput(c.Out, out.String()); err != nil {
					t.Errorf("%s: the page shows other output than the command prints now: %v\n--- it prints:\n%s", c, err, out.String())
				}
				if i+1 < len(cmds) && cmds[i+1].Text == "echo $?" {
					want, err := strconv.Atoi(strings.TrimSpace(strings.Join(cmds[i+1].Out, "")))
					if err != nil || want != code {
						t.Errorf("%s: exits %d, the page says %q", c, code, cmds[i+1].Out)
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Error("no block marked <!-- doctest: output --> ran")
	}
	t.Logf("%d commands run and their output compared", ran)
}
