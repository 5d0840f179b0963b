package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/doctest"
)

// markedPages are the pages whose every command block (sh, bash, console)
// carries a doctest marker: the README and the guides.
func markedPages(t *testing.T) []string {
	var out []string
	for _, f := range docFiles(t) {
		if f == "README.md" || strings.HasPrefix(f, "docs/guides/") {
			out = append(out, f)
		}
	}
	return out
}

// guideRunners are the test files that run the lab blocks of a guide;
// a guide with lab blocks must be named in one of them.
var guideRunners = []string{"internal/doctest/labtest/guides_linux_test.go", "internal/doctest/vmguide/guide_linux_test.go"}

// TestGuideBlocksMarked: every command block of the README and the guides
// is marked for the doctest runner: "lab" (run in a lab by
// internal/doctest/labtest or vmguide, which must name the guide),
// "output" (run in-process by TestDocOutputs), or "skip: REASON". A block
// of a session without a language (prompts "$ " or "# ") must say it is
// one (console). Fewer than 10 % of the blocks may be skipped.
func TestGuideBlocksMarked(t *testing.T) {
	var runners strings.Builder
	for _, r := range guideRunners {
		runners.WriteString(readDoc(t, r))
	}
	total, skipped := 0, 0
	var perPage []string
	for _, f := range markedPages(t) {
		n, s, lab := 0, 0, false
		for _, b := range doctest.Blocks(f, readDoc(t, f)) {
			if b.Lang == "" && len(b.Commands()) > 0 {
				t.Errorf("%s:%d: a block with prompts and no language: mark it console", f, b.Line)
			}
			if !b.Runnable() {
				continue
			}
			n++
			switch b.Marker {
			case "lab":
				lab = true
			case "output":
			case "skip":
				s++
				if strings.TrimSpace(b.Reason) == "" {
					t.Errorf("%s:%d: skipped without a reason: <!-- doctest: skip: WHY -->", f, b.Line)
				}
			case "":
				t.Errorf("%s:%d: a %s block without a doctest marker (lab, output or skip: REASON)", f, b.Line, b.Lang)
			default:
				t.Errorf("%s:%d: unknown doctest marker %q", f, b.Line, b.Marker)
			}
		}
		if lab && !strings.Contains(runners.String(), `"`+f+`"`) {
			t.Errorf("%s has lab blocks, and no test in %s runs it", f, strings.Join(guideRunners, " or "))
		}
		total += n
		skipped += s
		perPage = append(perPage, fmt.Sprintf("%s %d/%d", f, s, n))
	}
	msg := fmt.Sprintf("%d of %d command blocks skipped (%.1f %%): %s", skipped, total, 100*float64(skipped)/float64(max(total, 1)), strings.Join(perPage, ", "))
	if skipped*100 >= maxSkippedPercent*total {
		t.Errorf("%s; fewer than %d %% may be: run a block on a lab node that plays the real one (<!-- doctest: lab: on NODE -->, internal/doctest/labtest.RunCluster)", msg, maxSkippedPercent)
		return
	}
	t.Log(msg)
}

// maxSkippedPercent: fewer than this share of the marked pages' command
// blocks may be skipped.
const maxSkippedPercent = 10
