package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the generated reference pages in docs/reference")

// refDir is the committed reference, relative to this package.
var refDir = filepath.Join("..", "..", "docs", "reference")

// TestReferencePages keeps docs/reference generated from the command
// definitions: a page per command, none for a command that is gone (go
// test ./internal/docgen -run ReferencePages -update, or make docs,
// rewrites them).
func TestReferencePages(t *testing.T) {
	pages := ReferencePages(cli.NewRoot(io.Discard, io.Discard))
	changed, removed, err := StaleReference(refDir, pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed)+len(removed) == 0 {
		return
	}
	if *update {
		if err := WriteReference(refDir, pages); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/reference is stale (differ or missing: %s; no command any more: %s): run 'make docs' (or this test with -update)",
		strings.Join(changed, " "), strings.Join(removed, " "))
}

// TestReferencePagesStable renders the pages twice from two command trees:
// the same bytes, so make docs is idempotent whatever ran before.
func TestReferencePagesStable(t *testing.T) {
	a := ReferencePages(cli.NewRoot(io.Discard, io.Discard))
	root := cli.NewRoot(io.Discard, io.Discard)
	root.SetArgs([]string{"bench", "--help"})
	root.SetOut(io.Discard)
	root.Execute() // renders help first, as a test run before might
	b := ReferencePages(root)
	if len(a) != len(b) {
		t.Fatalf("%d pages, then %d", len(a), len(b))
	}
	for name, page := range a {
		if b[name] != page {
			t.Errorf("%s differs between two renderings", name)
		}
	}
}

// TestWriteReferenceRemovesOnlyGenerated writes pages into a directory
// holding a stale generated page and a hand-written one: the stale page
// goes, the hand-written one stays, and a second write changes nothing.
func TestWriteReferenceRemovesOnlyGenerated(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "interlink-gone.md")
	mine := filepath.Join(dir, "notes.md")
	os.WriteFile(stale, []byte(ReferenceHeader+"\n# interlink gone\n"), 0o644)
	os.WriteFile(mine, []byte("# notes\n"), 0o644)
	pages := map[string]string{"interlink-x.md": ReferenceHeader + "\n# interlink x\n"}
	if err := WriteReference(dir, pages); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale generated page kept: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("hand-written page removed: %v", err)
	}
	changed, removed, err := StaleReference(dir, pages)
	if err != nil || len(changed)+len(removed) != 0 {
		t.Errorf("after writing: changed %v, removed %v, %v", changed, removed, err)
	}
}
